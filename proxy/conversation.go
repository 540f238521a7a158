package proxy

import (
	"crypto/sha256"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/timeline"
)

// Conversations. Every HTTP exchange is a turn of a conversation, and a
// conversation is one stored session. An exchange joins the conversation
// it continues, decided from the request alone when it arrives:
//
//  1. a retry: the request is the same (canonical body) as the last
//     request of a conversation whose last exchange failed (an HTTP
//     error, a broken stream, no response) less than retryWindow ago. It
//     becomes the next attempt of that turn, with the failure as its
//     retry reason, as the engine records its own retries;
//  2. previous_response_id (Responses): the conversation that received
//     that response id;
//  3. history: the request's conversation items (messages, input,
//     contents) start with all the items of a conversation's last
//     request and add more (the model's answer and what followed it).
//     When several conversations qualify (two runs of the same app
//     started alike), the one whose last response the added items quote
//     (a tool call id, the start of its text) wins, then the most
//     recent. What a response says is known once its recording has
//     decoded it, which may be a moment after the client has it: when a
//     tie could hang on a response still being recorded, the request
//     waits for it (at most a second);
//  4. otherwise a new conversation.
//
// Items are compared in canonical form (keys sorted, nulls dropped), so
// an SDK that re-serialises the history it sends back still matches.
// Requests the proxy cannot classify all go to one "unknown" session per
// proxy, one turn each.

// retryWindow bounds how long after a failure an identical request
// counts as its retry.
const retryWindow = 10 * time.Minute

// keepConversations bounds the conversations remembered for linking; an
// older one keeps its session but is no longer continued.
const keepConversations = 256

// conversation is one stored session of recorded exchanges.
type conversation struct {
	n        int
	protocol string
	unknown  bool
	j        *timeline.StoreJournal // nil when nothing is recorded
	id       string                 // the session id, set by its first exchange's head

	// lastHead is closed when the latest exchange's head (started,
	// assembled, attempt) has been recorded: the next exchange waits for
	// it, so turns and attempts are recorded in the order they arrived.
	lastHead chan struct{}

	// Linking state, guarded by Proxy.mu.
	last       [][32]byte // the last request's history, item by item hashed (never the items: they are megabytes)
	lastKey    [32]byte
	lastAt     time.Time
	lastFailed string // why the last exchange failed ("" when it did not, or is still running)
	turn       int
	attempt    int
	marks      []string // quotes of the last response (call ids, text start)
	pending    int      // exchanges whose response is not yet noted
	active     int      // exchanges not yet fully recorded
	finished   bool
	verdicts   map[int]verdict // each turn's latest attempt: did it fail?
	edits      []editNote      // edited calls not yet seen in a later request's history
}

// link finds the conversation of a request and its turn and attempt;
// retry is the reason of a retry. Called with p.mu held. With mayWait, it
// returns a nil conversation when the choice hangs on a response still
// being recorded: the caller waits for a recording to end and asks again.
func (p *Proxy) link(req request, now time.Time, mayWait bool) (c *conversation, turn, attempt int, retry string) {
	if req.protocol == "" {
		if p.unknown == nil {
			p.unknown = p.newConversation("", true)
		}
		c = p.unknown
		c.turn++
		return c, c.turn, 1, ""
	}
	defer func() {
		if c != nil {
			c.last, c.lastKey, c.lastAt, c.lastFailed = hashItems(req.history), req.key, now, ""
		}
	}()
	// 1. A retry of a failed request.
	for i := len(p.convs) - 1; i >= 0; i-- {
		k := p.convs[i]
		if k.protocol == req.protocol && k.lastKey == req.key && k.lastFailed != "" && now.Sub(k.lastAt) < retryWindow {
			k.attempt++
			return k, k.turn, k.attempt, k.lastFailed
		}
	}
	// 2. previous_response_id.
	if req.previousID != "" {
		if k := p.byResponse[req.previousID]; k != nil {
			return p.nextTurn(k)
		}
	}
	// 3. History.
	var best *conversation
	bestScore, ties, pending := 0, 0, false
	for i := len(p.convs) - 1; i >= 0; i-- {
		k := p.convs[i]
		if k.protocol != req.protocol || len(k.last) == 0 || len(k.last) >= len(req.history) || !prefix(k.last, req.history) {
			continue
		}
		score := 1
		if quotes(req.history[len(k.last):], k.marks) {
			score = 2
		}
		pending = pending || k.pending > 0
		switch {
		case score > bestScore:
			best, bestScore, ties = k, score, 1
		case score == bestScore:
			ties++
		}
	}
	if best != nil && ties > 1 && pending && mayWait {
		return nil, 0, 0, ""
	}
	if best != nil {
		return p.nextTurn(best)
	}
	c = p.newConversation(req.protocol, false)
	return p.nextTurn(c)
}

func (p *Proxy) nextTurn(c *conversation) (*conversation, int, int, string) {
	c.turn++
	c.attempt = 1
	// Keep the most recently used conversation last.
	for i, k := range p.convs {
		if k == c {
			copy(p.convs[i:], p.convs[i+1:])
			p.convs[len(p.convs)-1] = c
			break
		}
	}
	return c, c.turn, 1, ""
}

func (p *Proxy) newConversation(protocol string, unknown bool) *conversation {
	p.next++
	c := &conversation{n: p.next, protocol: protocol, unknown: unknown, verdicts: map[int]verdict{}}
	p.all = append(p.all, c)
	if !unknown {
		p.convs = append(p.convs, c)
		if len(p.convs) > keepConversations {
			p.forget(p.convs[0])
			p.convs = p.convs[1:]
		}
	}
	return c
}

// forget drops a conversation from linking: it will get no more turns, so
// its session is ended now (or at Close, if an exchange of it is still
// being recorded). Called with p.mu held.
func (p *Proxy) forget(c *conversation) {
	c.last, c.marks = nil, nil
	for id, k := range p.byResponse {
		if k == c {
			delete(p.byResponse, id)
		}
	}
	if c.active > 0 {
		return
	}
	for i, k := range p.all {
		if k == c {
			p.all = append(p.all[:i], p.all[i+1:]...)
			break
		}
	}
	p.wg.Add(1)
	go func() {
		defer p.wg.Done()
		p.end(c)
	}()
}

// verdict is how a turn's latest judged attempt came out.
type verdict struct {
	attempt int
	failed  bool
}

// failed reports whether a turn's latest attempt failed (a failure mended
// by its retry does not count). Called with p.mu held.
func (c *conversation) failed() bool {
	for _, v := range c.verdicts {
		if v.failed {
			return true
		}
	}
	return false
}

// prefix reports whether the hashed items a begin b.
func prefix(a [][32]byte, b []string) bool {
	for i := range a {
		if a[i] != sha256.Sum256([]byte(b[i])) {
			return false
		}
	}
	return true
}

// hashItems hashes each item of a history.
func hashItems(items []string) [][32]byte {
	out := make([][32]byte, len(items))
	for i, it := range items {
		out[i] = sha256.Sum256([]byte(it))
	}
	return out
}

// quotes reports whether the added items mention one of the marks.
func quotes(added []string, marks []string) bool {
	if len(marks) == 0 {
		return false
	}
	joined := strings.Join(added, "\n")
	for _, m := range marks {
		if m != "" && strings.Contains(joined, m) {
			return true
		}
	}
	return false
}

// marksOf quotes a response as the next request would: its call ids and
// the start of its text, JSON-escaped as they appear in canonical items.
func marksOf(callIDs []string, text string) []string {
	var out []string
	for _, id := range callIDs {
		if len(id) >= 6 {
			out = append(out, id)
		}
	}
	// The first 40 runes: never the whole text as runes (a long
	// response's text is megabytes, four bytes a rune).
	head := strings.TrimSpace(text)
	if i := 0; len(head) > 160 {
		for k := range head {
			if i == 40 {
				head = head[:k]
				break
			}
			i++
		}
	}
	if r := []rune(head); len(r) >= 12 {
		b, _ := adapters.MarshalBody(string(r[:min(len(r), 40)])) // as canonical writes it
		out = append(out, string(b[1:len(b)-1]))
	}
	return out
}
