package ui

import "strings"

// ASCII mode (--ascii, MODELWIRE_ASCII=1) is for terminals and fonts
// without box drawing or symbols: the finished frame has every border
// and marker replaced, cell for cell (a wide glyph by two characters),
// so layout and width maths stay as they are. Text (CJK included) is
// left alone. Every symbol a string in ui/ or themes/ draws must have
// its fold here (TestASCIIFoldsEveryGlyph reads the sources).
var asciiFolder = strings.NewReplacer(
	// Borders: rounded, normal, thick, double.
	"╭", "+", "╮", "+", "╰", "+", "╯", "+", "┌", "+", "┐", "+", "└", "+", "┘", "+",
	"┏", "+", "┓", "+", "┗", "+", "┛", "+", "╔", "+", "╗", "+", "╚", "+", "╝", "+",
	"├", "+", "┤", "+", "┬", "+", "┴", "+", "┼", "+",
	"─", "-", "━", "=", "═", "=", "│", "|", "┃", "|", "║", "|",
	// Markers.
	"◆", "*", "•", "*", "▸", ">", "✓", "+", "✗", "x", "⏸", "#", "●", "o", "○", ".", "▶", ">",
	"→", ">", "←", "<", "↑", "^", "↓", "v", "·", ".", "…", "~", "–", "-", "—", "-", "≠", "!",
	"▁", "_", "▂", "_", "▃", "=", "▄", "=", "▅", "#", "▆", "#", "▇", "#", "█", "#", "░", ":", "▒", "%",
	"▌", "|", "✎", "/", "↳", `\`, "×", "x", "«", "<", "»", ">", "‹", "<", "›", ">", "−", "-",
	"▾", "v", "▲", "^", "≥", ">", "§", "S", "▏", "|", "▎", "|", "▍", "|", "▋", "#", "▊", "#", "▉", "#",
	"⏳", "..", // two cells wide
)

// asciiFrame folds a rendered frame to ASCII.
func asciiFrame(s string) string { return asciiFolder.Replace(s) }

// mark is a letter drawn as a marker, or its ASCII stand-in in ASCII
// mode. Letters are not folded with the frame: the same letter in a
// person's text (Greek, say) must stay as it is.
func (c *Common) mark(glyph, ascii string) string {
	if c.ASCII {
		return ascii
	}
	return glyph
}
