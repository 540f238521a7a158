package har

import (
	"bytes"
	"encoding/json"
	"io"
	"mime"
	"net/http"
	"net/url"
	"sort"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/store"
)

// Writing a stored session as a HAR file.

// Export writes a session as a HAR 1.2 log, one entry per HTTP attempt,
// that browsers' devtools and HAR viewers open. A streamed response body
// is written back as an SSE stream of its raw events. creator is the
// modelwire version to name in log.creator.
func Export(db *store.DB, w io.Writer, id, creator string) error {
	s, err := db.GetSession(id)
	if err != nil {
		return err
	}
	// Each attempt's response body, rebuilt from its raw events in the
	// framing they came in.
	type body struct {
		buf         bytes.Buffer
		ndjson, sse bool
	}
	bodies := make(map[[2]int]*body, len(s.Attempts))
	for i := range s.Attempts {
		a := &s.Attempts[i]
		bodies[[2]int{a.Turn, a.Attempt}] = &body{ndjson: a.Protocol == adapters.ClaudeCode, sse: isStreamed(a)}
	}
	entries := map[[2]int][]harSessionEntry{}
	var last [2]int // the attempt whose events came last
	if len(s.Attempts) > 0 {
		last = [2]int{s.Attempts[0].Turn, s.Attempts[0].Attempt}
	}
	err = db.EachStep(id, s.Events, func(st *store.StoredStep) {
		if st.Attempt == 0 {
			for _, ev := range st.Events {
				entries[last] = append(entries[last], harSessionEntry{OffsetUS: st.OffsetUS, Entry: ev})
			}
			return
		}
		last = [2]int{st.Turn, st.Attempt}
		b := bodies[[2]int{st.Turn, st.Attempt}]
		switch {
		case st.Raw == nil || b == nil:
		case b.ndjson:
			b.buf.WriteString(st.Raw.Data)
			b.buf.WriteByte('\n')
		case b.sse:
			st.Raw.WriteSSE(&b.buf)
		default:
			b.buf.WriteString(st.Raw.Data)
		}
	})
	if err != nil {
		return err
	}
	log := harFile{Log: harLog{Version: "1.2", Creator: harCreator{Name: "modelwire", Version: creator}, Pages: []struct{}{}, Entries: []harEntry{}}}
	for i := range s.Attempts {
		a := &s.Attempts[i]
		e := harEntryOf(s, a, bodies[[2]int{a.Turn, a.Attempt}].buf.String())
		e.Modelwire.Entries = entries[[2]int{a.Turn, a.Attempt}]
		log.Log.Entries = append(log.Log.Entries, e)
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(log)
}

// isStreamed reports whether an attempt's response body was a stream: as
// its Content-Type says, else as asked, except that an HTTP error answers
// with a whole body.
func isStreamed(a *store.Attempt) bool {
	if ct := a.ResponseHeader.Get("Content-Type"); ct != "" {
		mt, _, _ := mime.ParseMediaType(ct)
		return mt == "text/event-stream"
	}
	return a.Stream && a.StatusCode < 400
}

func ms(d *time.Duration) float64 {
	if d == nil {
		return -1
	}
	return float64(d.Microseconds()) / 1000
}

// msOrNil is a recorded time point in milliseconds, nil when not recorded.
func msOrNil(d *time.Duration) *float64 {
	if d == nil {
		return nil
	}
	v := ms(d)
	return &v
}

func harEntryOf(s *store.Session, a *store.Attempt, body string) harEntry {
	e := harEntry{
		StartedDateTime: a.StartedAt.UTC().Format("2006-01-02T15:04:05.000Z07:00"),
		ResourceType:    "fetch",
		Modelwire: &harExt{Session: s.ID, Turn: a.Turn, Attempt: a.Attempt, Protocol: a.Protocol, Status: s.Status,
			Scenario: s.Scenario, Variant: s.Variant, Provider: s.Provider},
	}
	req := harRequest{Method: a.Method, URL: a.URL, HTTPVersion: "HTTP/1.1", Cookies: []harNV{}, Headers: harHeaders(a.RequestHeader),
		QueryString: []harNV{}, HeadersSize: -1, BodySize: int64(len(a.RequestBody))}
	if req.Method == "" {
		req.Method = http.MethodPost
	}
	if u, err := url.Parse(a.URL); err == nil {
		for k, vs := range u.Query() {
			for _, v := range vs {
				req.QueryString = append(req.QueryString, harNV{k, v})
			}
		}
		sort.Slice(req.QueryString, func(i, j int) bool { return req.QueryString[i].Name < req.QueryString[j].Name })
	}
	if a.RequestBody != nil {
		mt := a.RequestHeader.Get("Content-Type")
		if mt == "" {
			mt = "application/json"
		}
		req.PostData = &harPostData{MimeType: mt, Text: string(a.RequestBody)}
	}
	e.Request = req
	mt := a.ResponseHeader.Get("Content-Type")
	if mt == "" {
		mt = "application/json"
		if isStreamed(a) {
			mt = "text/event-stream"
		}
	}
	e.Response = harResponse{Status: a.StatusCode, StatusText: http.StatusText(a.StatusCode), HTTPVersion: "HTTP/1.1",
		Cookies: []harNV{}, Headers: harHeaders(a.ResponseHeader), RedirectURL: "", HeadersSize: -1, BodySize: int64(len(body)),
		Content: harContent{Size: int64(len(body)), MimeType: mt, Text: body}}
	tm := a.Timings
	end := tm.Finished
	if tm.Terminal != nil {
		end = tm.Terminal
	}
	send, firstByte := ms(tm.Sent), ms(tm.FirstByte)
	e.Timings = harTimings{Blocked: -1, DNS: -1, Connect: -1, SSL: -1, Send: max(send, 0), Wait: 0, Receive: 0}
	if firstByte >= 0 {
		e.Timings.Wait = max(firstByte-max(send, 0), 0)
		if endMS := ms(end); endMS >= firstByte {
			e.Timings.Receive = endMS - firstByte
		}
	}
	e.Time = e.Timings.Send + e.Timings.Wait + e.Timings.Receive
	if tm.FirstEvent != nil || tm.FirstToken != nil || tm.FirstText != nil || tm.Terminal != nil || tm.Server != nil {
		e.Modelwire.Times = &harTimes{FirstEvent: msOrNil(tm.FirstEvent), FirstToken: msOrNil(tm.FirstToken),
			FirstText: msOrNil(tm.FirstText), Terminal: msOrNil(tm.Terminal), Server: msOrNil(tm.Server)}
		if tm.Server != nil {
			e.Modelwire.Times.ServerSource = tm.ServerSource
		}
	}
	return e
}

func harHeaders(h http.Header) []harNV {
	out := []harNV{}
	keys := make([]string, 0, len(h))
	for k := range h {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		for _, v := range h[k] {
			out = append(out, harNV{k, v})
		}
	}
	return out
}
