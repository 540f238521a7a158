package cli

import "github.com/modelwire/modelwire/redact"

// redactBodyUsage is the --redact-body flag's help.
const redactBodyUsage = `FILE of body redaction rules, {"patterns": [regexp…], "pointers": ["/a/*/b"…]}: personal data removed from everything recorded (requests, responses, streams across their events); the application still gets every byte`

// loadBodyRules reads --redact-body's file ("" is none); a bad file is a
// usage error naming the bad pattern or pointer.
func loadBodyRules(path string) (*redact.BodyRules, error) {
	if path == "" {
		return nil, nil
	}
	r, err := redact.LoadBodyRules(path)
	if err != nil {
		return nil, usageErr("--redact-body: %v", err)
	}
	return r, nil
}
