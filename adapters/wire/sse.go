package wire

import "github.com/modelwire/modelwire/adapters"

// AppendEvent appends one SSE event as the providers frame it: the event
// name and id lines when set, one data line, a blank line, each line
// ended by nl ("\n", or "\r\n" for Gemini).
func AppendEvent(dst []byte, ev adapters.WireEvent, nl string) []byte {
	if ev.Event != "" {
		dst = append(dst, "event: "...)
		dst = append(dst, ev.Event...)
		dst = append(dst, nl...)
	}
	if ev.ID != "" {
		dst = append(dst, "id: "...)
		dst = append(dst, ev.ID...)
		dst = append(dst, nl...)
	}
	dst = append(dst, "data: "...)
	dst = append(dst, ev.Data...)
	dst = append(dst, nl...)
	return append(dst, nl...)
}
