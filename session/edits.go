package session

import "strings"

// What a proxy's edits are recorded as. A proxy that edits traffic (a
// rule, or a person holding a call) records the original, the edit and
// who made it as decisions (UpDecision, store.Decision rows), so that a
// session read back shows both. A tool call's edit is its own call's
// decision: Kind Edited, the proposal's Arguments the model's, the
// decision's Arguments the ones the application got, Reason "edited by
// WHO". The edits that are not tool calls are recorded under the
// pseudo-call names below — one of each a turn, the name also the call
// id — with the original and the edit as JSON (a string for the text and
// the stop reason, the body for the request). The proxy writes these
// names and the workbench reads them: both import them from here.
const (
	// EditedRequest is a request edited before it left: Arguments the body
	// the application sent, Edited the one that left.
	EditedRequest = "(request)"
	// EditedText is a response's text edited before the application got it.
	EditedText = "(text)"
	// EditedStop is a response's stop reason edited likewise.
	EditedStop = "(stop reason)"
	// ClientBytes holds the bytes the application got when they are not
	// the upstream's (an edited response, re-encoded): Edited is a JSON
	// string of them.
	ClientBytes = "(client response)"
	// CarriedNote starts the Reason of the decision noted when the
	// application's next request carries an edited call back in its
	// history (a decision of that later turn, on the edited call's id):
	// the Reason then ends in CarriedEdited or CarriedOriginal.
	CarriedNote = "carried: "
	// CarriedEdited ends a carried note when the call came back as edited.
	CarriedEdited = "edited (the model sees the call the application ran)"
	// CarriedOriginal ends it when the call came back as the model first
	// proposed it: the model sees a call the application did not run.
	CarriedOriginal = "as the model proposed it, not as edited"
)

// PseudoCall reports whether a decision's call id names one of the
// edits above, not a tool call.
func PseudoCall(callID string) bool {
	switch callID {
	case EditedRequest, EditedText, EditedStop, ClientBytes:
		return true
	}
	return false
}

// Carried reports whether a decision notes a call carried back in a
// later request's history, and whether it came back as edited (false:
// as the model originally proposed it).
func Carried(d *Decision) (carried, edited bool) {
	if d == nil || !strings.HasPrefix(d.Reason, CarriedNote) {
		return false, false
	}
	return true, !strings.HasSuffix(d.Reason, CarriedOriginal)
}

// EditedBy is who made an edit, as its decision says: the reason's
// "edited by WHO" (the proxy's rules and a person holding a call write
// it; a stored decision read back keeps only the reason), else By.
func EditedBy(d *Decision) string {
	if d == nil {
		return ""
	}
	if i := strings.LastIndex(d.Reason, "edited by "); i >= 0 {
		return strings.TrimSpace(d.Reason[i+len("edited by "):])
	}
	return d.By
}
