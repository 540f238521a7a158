package reliability

import (
	"bufio"
	"crypto/sha256"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"sync"
	"testing"
	"time"
)

// chatStream is an OpenAI Chat Completions upstream that answers every
// request with one stream of n text deltas "w0 ", "w1 ", … (n from the
// X-Test-Events header, else its default), pausing a millisecond every
// pace deltas so a kill can land anywhere in it. It keeps a hash of each
// request body it received and of each response it wrote.
type chatStream struct {
	n, pace int
	// stallAt, when > 0, holds every stream open after that many deltas
	// (closing stalled) until the client goes away.
	stallAt int
	stalled chan struct{}

	stallOnce sync.Once

	mu        sync.Mutex
	requests  int
	reqHashes [][32]byte
	outHashes [][32]byte
	keys      []string
}

func newChatStream(t *testing.T, n, pace int) (*chatStream, string) {
	return newStallingChatStream(t, n, pace, 0)
}

// newStallingChatStream is newChatStream holding every stream open after
// stallAt deltas; the field is set before the server starts, so no
// handler reads it while it is written.
func newStallingChatStream(t *testing.T, n, pace, stallAt int) (*chatStream, string) {
	cs := &chatStream{n: n, pace: pace, stallAt: stallAt, stalled: make(chan struct{})}
	srv := httptest.NewServer(cs)
	t.Cleanup(srv.Close)
	return cs, srv.URL
}

func (cs *chatStream) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	n := cs.n
	if v, err := strconv.Atoi(r.Header.Get("X-Test-Events")); err == nil {
		n = v
	}
	cs.mu.Lock()
	cs.requests++
	cs.reqHashes = append(cs.reqHashes, sha256.Sum256(body))
	for _, h := range []string{"Authorization", "X-Api-Key", "X-Goog-Api-Key", "Api-Key"} {
		if v := r.Header.Get(h); v != "" {
			cs.keys = append(cs.keys, v)
		}
	}
	cs.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	h := sha256.New()
	bw := bufio.NewWriterSize(io.MultiWriter(w, h), 64<<10)
	flush := func() {
		_ = bw.Flush()
		if f, ok := w.(http.Flusher); ok {
			f.Flush()
		}
	}
	const head = `{"id":"chatcmpl-rel","object":"chat.completion.chunk","created":1767225600,"model":"rel-model","choices":[{"index":0,"delta":`
	fmt.Fprintf(bw, "data: %s{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":null}]}\n\n", head)
	for i := 0; i < n; i++ {
		if cs.stallAt > 0 && i == cs.stallAt {
			flush()
			cs.stallOnce.Do(func() { close(cs.stalled) })
			<-r.Context().Done()
			return
		}
		fmt.Fprintf(bw, "data: %s{\"content\":\"w%d \"},\"finish_reason\":null}]}\n\n", head, i)
		if cs.pace > 0 && i%cs.pace == cs.pace-1 {
			flush()
			time.Sleep(time.Millisecond)
		}
		if r.Context().Err() != nil {
			return
		}
	}
	fmt.Fprintf(bw, "data: %s{},\"finish_reason\":\"stop\"}]}\n\n", head)
	fmt.Fprintf(bw, "data: {\"id\":\"chatcmpl-rel\",\"object\":\"chat.completion.chunk\",\"created\":1767225600,\"model\":\"rel-model\",\"choices\":[],\"usage\":{\"prompt_tokens\":10,\"completion_tokens\":%d,\"total_tokens\":%d}}\n\n", n, n+10)
	fmt.Fprint(bw, "data: [DONE]\n\n")
	flush()
	var sum [32]byte
	copy(sum[:], h.Sum(nil))
	cs.mu.Lock()
	cs.outHashes = append(cs.outHashes, sum)
	cs.mu.Unlock()
}

// chatRequest is a minimal streaming Chat Completions request body.
func chatRequest(marker string) string {
	return `{"model":"rel-model","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"reliability ` + marker + `"}]}`
}

// hashes are the hashes of the request bodies received and the responses
// written so far.
func (cs *chatStream) hashes() (reqs, outs [][32]byte) {
	cs.mu.Lock()
	defer cs.mu.Unlock()
	return append([][32]byte(nil), cs.reqHashes...), append([][32]byte(nil), cs.outHashes...)
}
