package ui

// Glyphs are the symbols the workbench marks state with. They carry the
// meaning on their own, so focus and status read without colour
// (NO_COLOR); the ASCII set is for terminals and fonts without box
// drawing or these symbols (--ascii, MODELWIRE_ASCII=1).
type Glyphs struct {
	Cursor  string // the selected row
	Focus   string // the focused panel's title
	Pass    string
	Fail    string
	Skip    string
	Pause   string
	Running string
	Cut     string // where text was cut
}

// UnicodeGlyphs are the default.
var UnicodeGlyphs = Glyphs{Cursor: "▸", Focus: "◆", Pass: "✓", Fail: "✗", Skip: "–", Pause: "⏸", Running: "●", Cut: "…"}

// ASCIIGlyphs use printable ASCII only.
var ASCIIGlyphs = Glyphs{Cursor: ">", Focus: "*", Pass: "+", Fail: "x", Skip: "-", Pause: "||", Running: "*", Cut: "~"}
