package ui

import "strings"

// ASCII mode (--ascii, MODELWIRE_ASCII=1) is for terminals and fonts
// without box drawing or symbols: the finished frame has every border
// and marker replaced, one cell for one cell, so layout and width maths
// stay as they are. Text (CJK included) is left alone.
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
)

// asciiFrame folds a rendered frame to ASCII.
func asciiFrame(s string) string { return asciiFolder.Replace(s) }
