package collect

import (
	"encoding/json"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
)

// Source is the store's source of a collected session.
const Source = "collect"

// NotCaptured is what a turn says when its span carries no messages: the
// application did not turn content capture on.
const NotCaptured = "content not captured: the span carries the call's shape, usage and timing, not its messages"

// Diagnostic kinds of a collected turn.
const (
	diagNotCaptured = "content_not_captured"
	diagUnmapped    = "unmapped_attributes"
)

// openTrace is a trace whose session is still being written.
type openTrace struct {
	id       string
	j        *timeline.StoreJournal
	sid      string
	protocol string
	created  time.Time
	last     time.Time // the wall clock when a span of it last arrived
	end      time.Time // the latest span end seen
	turns    int
	failed   bool
	status   store.Status        // as a modelwire export says, else ""
	proposed map[string]toolCall // tool calls proposed, by call_id
	callTurn map[string]int      // the turn that proposed a call_id
	rootSeen bool
	pending  []*span // received, not yet written
}

// maxPending bounds the spans a trace holds before they are written.
const maxPending = 512

// ingest takes the spans of one trace from a request. They wait a moment
// (Settle) before they are written: exporters send spans as they end,
// in concurrent requests that arrive in any order, and a trace's calls are
// numbered in the order they started. Called with c.mu held.
func (c *Collector) ingest(tid string, spans []*span) {
	t := c.open[tid]
	if t == nil {
		genai := false
		for _, sp := range spans {
			op := sp.operation()
			genai = genai || modelOps[op] || op == opTool || op == opAgent
		}
		if !genai {
			c.stats.passed.Add(int64(len(spans)))
			return
		}
		if len(c.open) >= c.o.MaxOpen {
			c.finishOldest()
		}
		t = &openTrace{id: tid, proposed: map[string]toolCall{}, callTurn: map[string]int{}}
		c.open[tid] = t
	}
	t.last = time.Now()
	t.pending = append(t.pending, spans...)
	for _, sp := range spans {
		t.rootSeen = t.rootSeen || sp.parentID == ""
	}
	if len(t.pending) >= maxPending {
		c.flush(t)
	}
}

// flush writes the spans trace t holds, in the order they started,
// creating its session with the first.
func (c *Collector) flush(t *openTrace) {
	spans := t.pending
	t.pending = nil
	if len(spans) == 0 {
		return
	}
	sort.SliceStable(spans, func(i, j int) bool { return spans[i].start.Before(spans[j].start) })
	if t.j == nil {
		if err := c.start(t, spans); err != nil {
			c.o.Log.Warn("collect: cannot record a session", "trace", t.id, "err", err)
			c.stats.failed.Add(int64(len(spans)))
			return
		}
	}
	for _, sp := range spans {
		if sp.end.After(t.end) {
			t.end = sp.end
		}
		var err error
		switch op := sp.operation(); {
		case modelOps[op]:
			err = c.turn(t, sp)
			c.stats.turns.Add(1)
		case op == opTool:
			err = c.tool(t, sp)
			c.stats.tools.Add(1)
		case op == opAgent || sp.parentID == "":
			c.agent(t, sp)
			if op != opAgent {
				c.stats.passed.Add(1)
			}
		default:
			c.stats.passed.Add(1)
		}
		if err != nil {
			c.o.Log.Warn("collect: recording a span", "trace", t.id, "span", sp.spanID, "err", err)
			c.stats.failed.Add(1)
		}
	}
}

// start creates trace t's session from the first spans written.
func (c *Collector) start(t *openTrace, spans []*span) error {
	t.created = spans[0].start
	tid := t.id
	title, model, provider, base := "", "", "", ""
	params := map[string]any{"trace_id": tid}
	for _, sp := range spans {
		op := sp.operation()
		if (op == opAgent || sp.parentID == "") && title == "" {
			title = sp.name
			if n := sp.str(keyAgentName); n != "" {
				title = opAgent + " " + n
			}
			provider = sp.str(keyMWProvider)
			if st := store.Status(sp.str(keyMWStatus)); st != "" {
				t.status = st
			}
			if conv := sp.str(keyConversation); conv != "" {
				params["conversation_id"] = conv
			}
			// The agent's own attributes (gen_ai.agent.id, the SDK's
			// metadata…) are the session's: kept in its parameters.
			if extra := sp.unmapped(); len(extra) > 0 {
				sort.Strings(extra)
				params["agent_span_attributes"] = extra
			}
		}
		if modelOps[op] && t.protocol == "" {
			t.protocol, provider = protocolOf(sp, provider)
			model = sp.str(keyRequestModel)
			base = serverOf(sp)
		}
	}
	if t.protocol == "" {
		t.protocol = registry.Default
	}
	if title == "" {
		title = "trace " + tid
	}
	if svc := spans[0].service; svc != "" {
		title = svc + " · " + title
	}
	pj, _ := json.Marshal(params)
	meta := store.SessionMeta{Copy: true, Title: title, Protocol: t.protocol, Provider: provider, Model: model, BaseURL: base,
		Source: Source, Version: c.o.Version, CreatedAt: t.created,
		Manifest: store.Manifest{Parameters: pj, Model: model, Protocol: t.protocol, Provider: provider}}
	t.j = timeline.NewStoreJournal(c.o.DB, meta, false)
	id, err := t.j.Start()
	if err != nil {
		t.j = nil
		return err
	}
	t.sid = id
	c.stats.sessions.Add(1)
	c.observe(t, session.Update{Kind: session.UpStarted, At: t.created})
	return nil
}

// protocolOf is the wire format a model call most likely followed: the
// one modelwire's own export names, else the first protocol whose trace
// names match the span's provider and operation. It returns the provider
// the session is listed under too.
func protocolOf(sp *span, provider string) (string, string) {
	if p := sp.str(keyMWProtocol); p != "" {
		if _, ok := registry.Describe(p); ok {
			return p, provider
		}
	}
	name := sp.str(keyProvider)
	head, _, _ := strings.Cut(name, ".") // the Vercel AI SDK's "openai.responses"
	for _, want := range []string{name, head} {
		for _, d := range registry.All() {
			if d.Trace.ProviderName == want && want != "" {
				if provider == "" {
					provider = d.Provider
				}
				return d.Name, provider
			}
		}
	}
	if provider == "" {
		provider = name
	}
	return "", provider
}

// serverOf is the base URL a model call went to, when the span says.
func serverOf(sp *span) string {
	host := sp.str(keyServerAddr)
	if host == "" {
		return ""
	}
	if p := sp.num(keyServerPort); p != nil {
		host = net.JoinHostPort(host, strconv.FormatInt(*p, 10))
	}
	return "http://" + host
}

// observe hands an update to the live view, if there is one.
func (c *Collector) observe(t *openTrace, u session.Update) {
	if c.o.Observe == nil {
		return
	}
	u.SessionID = t.sid
	c.o.Observe(u)
}

// record writes an update through the journal and shows it.
func (c *Collector) record(t *openTrace, u session.Update) error {
	u.SessionID = t.sid
	if err := t.j.Record(u); err != nil {
		return err
	}
	c.observe(t, u)
	return nil
}

// agent notes the agent's (or the trace's root) span: its status, and
// that the trace has ended when it is the root.
func (c *Collector) agent(t *openTrace, sp *span) {
	if st := store.Status(sp.str(keyMWStatus)); st != "" {
		t.status = st
	}
	if sp.failed {
		t.failed = true
	}
	// A modelwire export carries the session's own verdict (turn 0) here.
	if layers := restoredVerdict(sp); layers != nil {
		_ = c.verdictEntry(t, 0, layers, sp.end)
	}
	if sp.parentID == "" {
		t.rootSeen = true
	}
}

// finish writes what trace t holds, ends its session and forgets the trace.
func (c *Collector) finish(t *openTrace) {
	c.flush(t)
	delete(c.open, t.id)
	if t.j == nil {
		return // nothing of it could be recorded
	}
	status := t.status
	if status == "" {
		status = store.StatusDone
		if t.failed {
			status = store.StatusFailed
		}
	}
	end := t.end
	if end.Before(t.created) {
		end = t.created
	}
	var err error
	if status == store.StatusInterrupted {
		err = t.j.Interrupt()
	} else {
		if status != store.StatusFailed {
			status = store.StatusDone
		}
		err = t.j.FinishAt(status, end)
	}
	if err != nil {
		c.o.Log.Warn("collect: ending a session", "session", t.sid, "err", err)
	}
	c.observe(t, session.Update{Kind: session.UpFinished, Status: status, At: end})
}

// finishOldest ends the session heard from least recently, to keep the
// open traces within MaxOpen.
func (c *Collector) finishOldest() {
	var oldest *openTrace
	for _, t := range c.open {
		if oldest == nil || t.last.Before(oldest.last) {
			oldest = t
		}
	}
	if oldest != nil {
		c.finish(oldest)
	}
}
