// Package jsonl writes and reads modelwire's JSONL export: every stored
// event of a session, so that importing it elsewhere restores the session
// as it was.
package jsonl

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"time"
	"unicode/utf8"

	"github.com/modelwire/modelwire/store"
)

// The JSONL export: a header line, then per session one "session" line,
// its "attempt" lines, and its timeline as "step" lines, each a raw event
// with the canonical events derived from it exactly as stored. Derived
// columns (usage, terminal, counters) are not exported: importing the
// steps rebuilds them. Importing an export into another database and
// exporting it again gives the same bytes.

// ExportFormat is the version of the JSONL export format. Format 2 adds
// the first output token and the provider's server figure to an
// attempt's timings (server_source names it); format 1 files, which lack
// them, import as before.
const ExportFormat = 2

const exportMagic = "modelwire.export"

type exportHeader struct {
	Type   string `json:"type"`
	Format int    `json:"format"`
	Schema int    `json:"schema"`
}

type exportSession struct {
	Type          string          `json:"type"`
	ID            string          `json:"id"`
	CreatedAt     time.Time       `json:"created_at"`
	FinishedAt    *time.Time      `json:"finished_at,omitempty"`
	Status        store.Status    `json:"status"`
	Title         string          `json:"title"`
	Scenario      string          `json:"scenario"`
	Variant       string          `json:"variant,omitempty"`
	Protocol      string          `json:"protocol"`
	Provider      string          `json:"provider"`
	Model         string          `json:"model"`
	ModelReported string          `json:"model_reported,omitempty"`
	BaseURL       string          `json:"base_url,omitempty"`
	Source        string          `json:"source,omitempty"`
	Version       string          `json:"modelwire_version,omitempty"`
	ParentID      string          `json:"parent_id,omitempty"`
	Manifest      json.RawMessage `json:"manifest,omitempty"`
}

type exportAttempt struct {
	Type              string           `json:"type"`
	Turn              int              `json:"turn"`
	Attempt           int              `json:"attempt"`
	Protocol          string           `json:"protocol"`
	StartedAt         time.Time        `json:"started_at"`
	StartUS           int64            `json:"start_us"`
	Method            string           `json:"method"`
	URL               string           `json:"url"`
	RequestHeaders    http.Header      `json:"request_headers"`
	RequestBody       *string          `json:"request_body,omitempty"`
	RequestBodyBase64 []byte           `json:"request_body_base64,omitempty"`
	Stream            bool             `json:"stream"`
	RetryReason       string           `json:"retry_reason,omitempty"`
	ReasoningSetting  *string          `json:"reasoning_setting,omitempty"`
	StatusCode        int              `json:"status_code"`
	ResponseHeaders   http.Header      `json:"response_headers"`
	Error             string           `json:"error,omitempty"`
	State             store.Status     `json:"state"`
	TimingsUS         map[string]int64 `json:"timings_us,omitempty"`
	// ServerSource names where timings_us's "server" came from: the
	// provider's own clock, not one of the client's time points.
	ServerSource string `json:"server_source,omitempty"`
}

// exportStep is a step line; it is written by hand (see writeStep) and
// read with this.
type exportStep struct {
	Type string `json:"type"`
	store.StoredStep
}

// timingNames are the keys of an attempt's timings_us, in the order of
// timingsOf; "first_byte" is the first response (the headers arrived).
var timingNames = [...]string{"sent", "first_byte", "first_event", "first_text", "terminal", "finished", "first_token", "server"}

// timingsOf lists t's offsets in timingNames' order.
func timingsOf(t *store.Timings) [len(timingNames)]**time.Duration {
	return [...]**time.Duration{&t.Sent, &t.FirstByte, &t.FirstEvent, &t.FirstText, &t.Terminal, &t.Finished, &t.FirstToken, &t.Server}
}

// Export writes one session as JSON Lines.
func Export(db *store.DB, w io.Writer, id string) error {
	s, err := db.GetSession(id)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(w, 256<<10)
	enc := json.NewEncoder(bw)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(exportHeader{Type: exportMagic, Format: ExportFormat, Schema: store.SchemaVersion}); err != nil {
		return err
	}
	man, _ := json.Marshal(s.Manifest)
	es := exportSession{Type: "session", ID: s.ID, CreatedAt: s.CreatedAt.UTC(), Status: s.Status, Title: s.Title,
		Scenario: s.Scenario, Variant: s.Variant, Protocol: s.Protocol, Provider: s.Provider, Model: s.Model,
		ModelReported: s.ModelReported, BaseURL: s.BaseURL, Source: s.Source, Version: s.Version, ParentID: s.ParentID, Manifest: man}
	if string(man) == "{}" {
		es.Manifest = nil
	}
	if !s.FinishedAt.IsZero() {
		f := s.FinishedAt.UTC()
		es.FinishedAt = &f
	}
	if err := enc.Encode(es); err != nil {
		return err
	}
	for _, a := range s.Attempts {
		ea := exportAttemptOf(a)
		if err := enc.Encode(ea); err != nil {
			return err
		}
	}
	var buf bytes.Buffer
	err = db.EachStep(id, s.Events, func(st *store.StoredStep) {
		buf.Reset()
		st.AppendJSON(&buf)
		bw.WriteString(`{"type":"step",`)
		bw.Write(buf.Bytes()[1:])
		bw.WriteByte('\n')
	})
	if err != nil {
		return err
	}
	return bw.Flush()
}

// exportAttemptOf is an attempt as an export line.
func exportAttemptOf(a store.Attempt) exportAttempt {
	ea := exportAttempt{Type: "attempt", Turn: a.Turn, Attempt: a.Attempt, Protocol: a.Protocol, StartedAt: a.StartedAt.UTC(),
		StartUS: a.Start.Microseconds(), Method: a.Method, URL: a.URL, RequestHeaders: a.RequestHeader, Stream: a.Stream,
		RetryReason: a.RetryReason, ReasoningSetting: a.Reasoning, StatusCode: a.StatusCode, ResponseHeaders: a.ResponseHeader,
		Error: a.Error, State: a.State}
	if a.RequestBody != nil {
		if utf8.Valid(a.RequestBody) {
			b := string(a.RequestBody)
			ea.RequestBody = &b
		} else {
			ea.RequestBodyBase64 = a.RequestBody
		}
	}
	tm := a.Timings
	for i, p := range timingsOf(&tm) {
		if d := *p; d != nil {
			if ea.TimingsUS == nil {
				ea.TimingsUS = map[string]int64{}
			}
			ea.TimingsUS[timingNames[i]] = d.Microseconds()
		}
	}
	if tm.Server != nil {
		ea.ServerSource = tm.ServerSource
	}
	return ea
}
