package vcr

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
)

// streamed says whether an exchange's response was an event stream.
func (x *exchange) streamed() bool {
	if ct := x.line.ResponseHeaders.Get("Content-Type"); ct != "" {
		return strings.HasPrefix(ct, "text/event-stream")
	}
	return x.line.Stream && x.line.StatusCode < 400
}

// framing are the headers a player frames itself.
var framing = map[string]bool{"Content-Length": true, "Transfer-Encoding": true, "Connection": true,
	"Content-Encoding": true, "Date": true, "Keep-Alive": true}

// response is a recorded exchange as an HTTP response: its status, its
// headers and its raw events (SSE re-framed), at full speed or each at
// its recorded offset from the request.
func (x *exchange) response(req *http.Request, timed bool) *http.Response {
	h := http.Header{}
	for k, vs := range x.line.ResponseHeaders {
		if !framing[http.CanonicalHeaderKey(k)] {
			h[http.CanonicalHeaderKey(k)] = append([]string(nil), vs...)
		}
	}
	h.Set("X-Modelwire-Replay", "recorded")
	status := x.line.StatusCode
	if status == 0 {
		status = http.StatusBadGateway // recorded without a response: the connection failed
	}
	stream := x.streamed()
	chunks := make([][]byte, 0, len(x.steps))
	offsets := make([]time.Duration, 0, len(x.steps))
	var all bytes.Buffer
	for _, st := range x.steps {
		if st.Raw == nil {
			continue
		}
		from := all.Len()
		if stream {
			st.Raw.WriteSSE(&all)
		} else {
			all.WriteString(st.Raw.Data)
		}
		chunks = append(chunks, all.Bytes()[from:all.Len()])
		offsets = append(offsets, time.Duration(st.OffsetUS-x.line.StartUS)*time.Microsecond)
	}
	var body io.ReadCloser = io.NopCloser(bytes.NewReader(all.Bytes()))
	if timed && stream {
		body = &timedBody{ctx: req.Context().Done(), chunks: chunks, offsets: offsets, start: time.Now()}
	}
	return &http.Response{Status: http.StatusText(status), StatusCode: status, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: body, ContentLength: -1, Request: req}
}

// timedBody gives each event when its recorded offset has passed.
type timedBody struct {
	ctx     <-chan struct{}
	chunks  [][]byte
	offsets []time.Duration
	start   time.Time
	cur     []byte
}

func (b *timedBody) Read(p []byte) (int, error) {
	if len(b.cur) == 0 {
		if len(b.chunks) == 0 {
			return 0, io.EOF
		}
		if d := b.offsets[0] - time.Since(b.start); d > 0 {
			t := time.NewTimer(d)
			select {
			case <-t.C:
			case <-b.ctx:
				t.Stop()
				return 0, io.ErrUnexpectedEOF
			}
		}
		b.cur, b.chunks, b.offsets = b.chunks[0], b.chunks[1:], b.offsets[1:]
	}
	n := copy(p, b.cur)
	b.cur = b.cur[n:]
	return n, nil
}

func (b *timedBody) Close() error { return nil }

// writeResponse sends a response on to a server's client, flushing as the
// body arrives (a timed stream goes out event by event).
func writeResponse(w http.ResponseWriter, resp *http.Response) {
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		if !framing[k] {
			w.Header()[k] = vs
		}
	}
	w.WriteHeader(resp.StatusCode)
	flusher, _ := w.(http.Flusher)
	buf := make([]byte, 32<<10)
	for {
		n, err := resp.Body.Read(buf)
		if n > 0 {
			if _, werr := w.Write(buf[:n]); werr != nil {
				return
			}
			if flusher != nil {
				flusher.Flush()
			}
		}
		if err != nil {
			return
		}
	}
}

// mismatchResponse is a miss as the provider's own error: a 409 in its
// protocol's shape (its simulator's ErrorResponse), the message an SDK
// shows, and the mismatch beside it for scripts. The official SDKs retry
// a 409 unless told x-should-retry: false; a miss would only come back
// again, so it says so.
func mismatchResponse(req *http.Request, protocol string, m *Mismatch) *http.Response {
	msg := "modelwire vcr: " + m.Error()
	body, header := mismatchBody(protocol, msg)
	if e, ok := body["error"].(map[string]any); ok {
		_, hasParam := e["param"]
		if _, hasCode := e["code"]; hasParam && hasCode {
			// An error that names a code and the parameter at fault
			// (OpenAI's) names the mismatch.
			e["code"], e["param"] = "replay_mismatch", m.Pointer
		}
	}
	body["modelwire_replay"] = m
	h := http.Header{}
	for k, vs := range header {
		h[http.CanonicalHeaderKey(k)] = vs
	}
	h.Set("Content-Type", "application/json")
	h.Set("X-Should-Retry", "false")
	b, _ := adapters.MarshalBody(body)
	return &http.Response{Status: "409 Conflict", StatusCode: http.StatusConflict, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(b)), ContentLength: int64(len(b)), Request: req}
}

// mismatchBody is the protocol's own 409 error body, decoded, and the
// headers it comes with: the error for a request at fault where the
// provider answers that kind with a 409, else its plain 409. A protocol
// the simulator does not speak gets an OpenAI-shaped error.
func mismatchBody(protocol, msg string) (map[string]any, http.Header) {
	if p, err := registry.Lookup(protocol); err == nil {
		if sim, ok := p.(adapters.Simulated); ok {
			e := sim.ErrorResponse(http.StatusConflict, "invalid_request_error", msg)
			if e.Status != http.StatusConflict {
				e = sim.ErrorResponse(http.StatusConflict, "", msg)
			}
			var body map[string]any
			if json.Unmarshal(e.Body, &body) == nil && body != nil {
				return body, e.Header
			}
		}
	}
	return map[string]any{"error": map[string]any{"message": msg, "type": "invalid_request_error", "code": nil, "param": nil}}, nil
}
