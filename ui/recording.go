package ui

import (
	"context"
	"errors"
	"sync"

	"github.com/modelwire/modelwire/session"
)

// The workbench as the screen of a recording proxy (`modelwire proxy
// --tui`). The proxy expresses every exchange it forwards as the
// session.Update values a scenario run produces; Recording is the Backend
// that hands them to the live path — the same coalescer, bridge, state
// fold, lanes and panels as a run — and answers the proxy's hold-mode
// questions with the same approval dialog.
//
// A proxy records several conversations (sessions) at once, while the
// live view folds one session.State. So Recording numbers exchanges as
// they come: each (session, turn) becomes the next view turn, and the
// panels show the latest exchange, whatever conversation it belongs to.
// The sessions browser lists each conversation as its own session.

// RecordingScenario names the recording in a RunConfig; loadScenario
// knows it has no scenario.
const RecordingScenario = "(recording)"

// RecordingRunConfig is the live view of a proxy listening on listen and
// forwarding to upstream (labels for the header).
func RecordingRunConfig(listen, upstream string) RunConfig {
	return RunConfig{Scenario: RecordingScenario, Protocol: "proxy " + listen, Provider: upstream, Stream: true}
}

// CollectRunConfig is the live view of `modelwire collect` receiving
// OTLP on listen: its sessions reach the workbench as a proxy's do.
func CollectRunConfig(listen string) RunConfig {
	return RunConfig{Scenario: RecordingScenario, Protocol: "collect " + listen, Provider: "otlp", Stream: true}
}

// recordingBacklog is how many recent exchanges a run that attaches late
// (the first one, or one back from a replay) is shown.
const recordingBacklog = 8

// Recording is the Backend of a recording proxy. Give Observe to the
// proxy as its observer, and the Recording itself as its hold decider.
type Recording struct {
	// Engine runs what the options dialog starts instead (a scenario);
	// nil refuses it.
	Engine Backend

	mu       sync.Mutex
	hooks    *Hooks
	runCtx   context.Context
	attached chan struct{} // closed while a run is attached
	views    map[viewKey]int
	next     int
	backlog  []session.Update
}

type viewKey struct {
	session string
	turn    int
}

// NewRecording starts with no run attached.
func NewRecording() *Recording {
	return &Recording{attached: make(chan struct{}), views: map[viewKey]int{}}
}

// Observe takes one update from the proxy (any goroutine).
func (r *Recording) Observe(u session.Update) {
	if u.Kind == session.UpFinished {
		return // a conversation's end is the proxy's; the view runs on
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	u = r.renumber(u)
	if u.Kind != session.UpStarted {
		r.backlog = append(r.backlog, u)
	}
	if r.hooks != nil && r.hooks.Observe != nil {
		r.hooks.Observe(u)
	}
}

// renumber gives an update its view turn. Called with r.mu held.
func (r *Recording) renumber(u session.Update) session.Update {
	if u.Turn == 0 {
		return u
	}
	k := viewKey{u.SessionID, u.Turn}
	v, ok := r.views[k]
	if !ok {
		r.next++
		v = r.next
		r.views[k] = v
		r.prune()
	}
	u.Turn = v
	if u.Proposal != nil {
		p := *u.Proposal
		p.Turn = v
		u.Proposal = &p
	}
	return u
}

// prune keeps the backlog to the last recordingBacklog exchanges.
func (r *Recording) prune() {
	oldest := r.next - recordingBacklog
	if oldest <= 0 {
		return
	}
	out := r.backlog[:0]
	for _, u := range r.backlog {
		if u.Turn > oldest {
			out = append(out, u)
		}
	}
	clear(r.backlog[len(out):])
	r.backlog = out
	for k, v := range r.views {
		if v <= oldest {
			delete(r.views, k)
		}
	}
}

// Run implements Backend: the recording's run shows the backlog, then
// every update as it comes, until ctx ends. A scenario run goes to the
// engine.
func (r *Recording) Run(ctx context.Context, sc *session.Scenario, rc RunConfig, h Hooks) error {
	if rc.Scenario != RecordingScenario {
		if r.Engine == nil {
			return errors.New("this workbench shows a recording: scenario runs are not available")
		}
		return r.Engine.Run(ctx, sc, rc, h)
	}
	r.mu.Lock()
	if r.hooks != nil {
		// Cannot happen (the model runs one session at a time); the
		// channel of the run replaced is already closed.
		r.attached = make(chan struct{})
	}
	r.hooks, r.runCtx = &h, ctx
	for _, u := range r.backlog {
		if h.Observe != nil {
			h.Observe(u)
		}
	}
	close(r.attached)
	r.mu.Unlock()

	<-ctx.Done()
	r.mu.Lock()
	if r.runCtx == ctx {
		r.hooks, r.runCtx = nil, nil
		r.attached = make(chan struct{})
	}
	r.mu.Unlock()
	return nil
}

// Decide implements session.Decider for hold mode: the approval dialog of
// the attached run answers. With no run attached (a replay is on screen),
// the question waits for the next one; a run that ends while it asks
// hands the question to the next.
func (r *Recording) Decide(ctx context.Context, p session.Proposal) (session.Decision, error) {
	for {
		r.mu.Lock()
		h, runCtx, wait := r.hooks, r.runCtx, r.attached
		r.mu.Unlock()
		if h == nil || h.Decider == nil {
			select {
			case <-wait:
				continue
			case <-ctx.Done():
				return session.Decision{}, ctx.Err()
			}
		}
		askCtx, cancel := context.WithCancel(ctx)
		stop := context.AfterFunc(runCtx, cancel)
		d, err := h.Decider.Decide(askCtx, p)
		stop()
		cancel()
		if err != nil && ctx.Err() == nil && runCtx.Err() != nil {
			// The run went away (a replay, a new run): ask the next one.
			r.mu.Lock()
			if r.runCtx == runCtx {
				// Not yet detached: the loop waits for the swap.
				r.hooks, r.runCtx = nil, nil
				r.attached = make(chan struct{})
			}
			r.mu.Unlock()
			continue
		}
		return d, err
	}
}

var _ Backend = (*Recording)(nil)
var _ session.Decider = (*Recording)(nil)
