package ui

import (
	"bytes"

	"github.com/yuin/goldmark/ast"
	east "github.com/yuin/goldmark/extension/ast"
	"github.com/yuin/goldmark/parser"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"
)

// GFM tables and strikethrough for the markdown renderer, building
// goldmark's own extension nodes. goldmark's extension package has both,
// but linking it links its linkify regular expressions (compiled at
// package initialisation, several milliseconds of every command's
// start-up) and its HTML renderers; these two parsers follow its
// implementation (MIT), without those.

// strikeParser parses ~text~ and ~~text~~ as strikethrough.
type strikeParser struct{}

func (strikeParser) Trigger() []byte { return []byte{'~'} }

func (strikeParser) Parse(parent ast.Node, block text.Reader, pc parser.Context) ast.Node {
	before := block.PrecendingCharacter()
	line, segment := block.PeekLine()
	node := parser.ScanDelimiter(line, before, 1, strikeDelimiter{})
	if node == nil || node.OriginalLength > 2 || before == '~' {
		return nil
	}
	node.Segment = segment.WithStop(segment.Start + node.OriginalLength)
	block.Advance(node.OriginalLength)
	pc.PushDelimiter(node)
	return node
}

func (strikeParser) CloseBlock(ast.Node, parser.Context) {}

type strikeDelimiter struct{}

func (strikeDelimiter) IsDelimiter(b byte) bool { return b == '~' }

func (strikeDelimiter) CanOpenCloser(opener, closer *parser.Delimiter) bool {
	return opener.Char == closer.Char
}

func (strikeDelimiter) OnMatch(int) ast.Node { return east.NewStrikethrough() }

// tableTransformer turns a paragraph whose second line (or later) is a
// delimiter row (| --- | :-: |) into a table: the line before it is the
// header, the lines after it are rows; lines before the header stay a
// paragraph. Cells are split at pipes not escaped with a backslash.
type tableTransformer struct{}

func (tableTransformer) Transform(node *ast.Paragraph, reader text.Reader, pc parser.Context) {
	lines := node.Lines()
	src := reader.Source()
	for i := 1; i < lines.Len(); i++ {
		delim := lines.At(i)
		aligns := tableDelimiter(delim.Value(src))
		if aligns == nil {
			continue
		}
		header := tableRow(lines.At(i-1), aligns, true, src)
		if len(aligns) != header.ChildCount() {
			return
		}
		table := east.NewTable()
		table.Alignments = aligns
		table.AppendChild(table, east.NewTableHeader(header))
		for j := i + 1; j < lines.Len(); j++ {
			table.AppendChild(table, tableRow(lines.At(j), aligns, false, src))
		}
		lines.SetSliced(0, i-1)
		node.Parent().InsertAfter(node.Parent(), node, table)
		if lines.Len() == 0 {
			node.Parent().RemoveChild(node.Parent(), node)
		} else {
			last := lines.At(i - 2)
			last.Stop-- // the paragraph's last newline
			lines.Set(i-2, last)
		}
		return
	}
}

// tableDelimiter reads a delimiter row's alignments, or nil if line is
// not one.
func tableDelimiter(line []byte) []east.Alignment {
	if w, _ := util.IndentWidth(line, 0); w > 3 {
		return nil
	}
	cols := bytes.Split(bytes.TrimSpace(line), []byte{'|'})
	if len(cols) > 0 && len(bytes.TrimSpace(cols[0])) == 0 {
		cols = cols[1:]
	}
	if len(cols) > 0 && len(bytes.TrimSpace(cols[len(cols)-1])) == 0 {
		cols = cols[:len(cols)-1]
	}
	if len(cols) == 0 {
		return nil
	}
	var aligns []east.Alignment
	for _, c := range cols {
		c = bytes.TrimSpace(c)
		left, right := bytes.HasPrefix(c, []byte{':'}), bytes.HasSuffix(c, []byte{':'})
		dashes := bytes.Trim(c, ":")
		if len(dashes) == 0 || len(bytes.Trim(dashes, "-")) != 0 {
			return nil
		}
		switch {
		case left && right:
			aligns = append(aligns, east.AlignCenter)
		case left:
			aligns = append(aligns, east.AlignLeft)
		case right:
			aligns = append(aligns, east.AlignRight)
		default:
			aligns = append(aligns, east.AlignNone)
		}
	}
	return aligns
}

// tableRow splits a row into cells (a body row keeps at most as many as
// the header has, and is padded to them).
func tableRow(seg text.Segment, aligns []east.Alignment, header bool, src []byte) *east.TableRow {
	seg = seg.TrimLeftSpace(src)
	seg = seg.TrimRightSpace(src)
	line := seg.Value(src)
	pos, limit := 0, len(line)
	if limit > 0 && line[0] == '|' {
		pos++
	}
	if limit > pos && line[limit-1] == '|' && (limit < 2 || line[limit-2] != '\\') {
		limit--
	}
	row := east.NewTableRow(aligns)
	i := 0
	for ; pos < limit; i++ {
		if i >= len(aligns) && !header {
			return row
		}
		cell := east.NewTableCell()
		if i < len(aligns) {
			cell.Alignment = aligns[i]
		}
		end := pos
		for end < limit && (line[end] != '|' || end > 0 && line[end-1] == '\\') {
			end++
		}
		cs := text.NewSegment(seg.Start+pos, seg.Start+end)
		cs = cs.TrimLeftSpace(src)
		cell.Lines().Append(cs.TrimRightSpace(src))
		row.AppendChild(row, cell)
		pos = end + 1
	}
	for ; i < len(aligns); i++ {
		row.AppendChild(row, east.NewTableCell())
	}
	return row
}
