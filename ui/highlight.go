package ui

import (
	"strings"
	"unicode/utf8"

	"github.com/modelwire/modelwire/themes"
)

// JSON highlighting. Every highlighted text in the workbench is JSON that
// is already valid and pretty-printed (or the inspector's folding of it),
// so a small tokenizer does what a general lexer library did, without the
// start-up cost of its registries (issue 20).

// highlightJSON pretty-prints and highlights JSON, then wraps it to width.
func (c *Common) highlightJSON(raw []byte, width int) []string {
	return c.highlight(prettyJSON(raw), width)
}

// highlight colours JSON text by token with the theme's code colours and
// wraps it to width. Colours go through lipgloss, so NO_COLOR and the
// ASCII profile give plain text. Text that is not JSON (a folded "{…3}",
// a truncated body) keeps the text colour where the tokenizer does not
// know it; nothing is dropped.
func (c *Common) highlight(code string, width int) []string {
	code = strings.ReplaceAll(strings.ReplaceAll(code, "\r\n", "\n"), "\t", "  ")
	var out []string
	for _, line := range strings.Split(code, "\n") {
		var spans []span
		for _, t := range jsonTokens(line) {
			spans = append(spans, span{text: t.text, st: c.Styles.Token(t.kind)})
		}
		out = append(out, c.wrapSpans(spans, width)...)
	}
	return out
}

// jsonToken is a piece of a line of JSON and its kind.
type jsonToken struct {
	text string
	kind themes.Token
}

// jsonTokens splits one line of JSON into tokens. A string followed by a
// colon is a key. The tokens cover the line exactly.
func jsonTokens(line string) []jsonToken {
	var toks []jsonToken
	for i := 0; i < len(line); {
		j, kind := i+1, themes.TokenText
		switch ch := line[i]; {
		case ch == ' ':
			for j < len(line) && line[j] == ' ' {
				j++
			}
		case ch == '"':
			for j < len(line) && line[j] != '"' {
				if line[j] == '\\' {
					j++
				}
				j++
			}
			j = min(j+1, len(line))
			kind = themes.TokenString
			if k := strings.TrimLeft(line[j:], " "); strings.HasPrefix(k, ":") {
				kind = themes.TokenKey
			}
		case ch == '-' || ch >= '0' && ch <= '9':
			for j < len(line) && strings.IndexByte("0123456789.eE+-", line[j]) >= 0 {
				j++
			}
			kind = themes.TokenNumber
		case ch >= 'a' && ch <= 'z':
			for j < len(line) && line[j] >= 'a' && line[j] <= 'z' {
				j++
			}
			if w := line[i:j]; w == "true" || w == "false" || w == "null" {
				kind = themes.TokenLiteral
			}
		case strings.IndexByte("{}[]:,", ch) >= 0:
			kind = themes.TokenPunct
		default:
			_, n := utf8.DecodeRuneInString(line[i:])
			j = i + n
		}
		toks = append(toks, jsonToken{line[i:j], kind})
		i = j
	}
	return toks
}
