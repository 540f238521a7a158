package workshop

import (
	"cmp"
	"crypto/subtle"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync"
	"time"

	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
)

// The headers a graded answer carries and the room endpoint's token.
const (
	GradeHeader = "X-Modelwire-Grade"
	HintHeader  = "X-Modelwire-Hint"
	TokenHeader = "X-Modelwire-Room-Token"
	// MePath and RoomPath are the room's endpoints.
	MePath   = sim.WorkshopPath + "me"
	RoomPath = sim.WorkshopPath + "room"
)

// Defaults that bound a room's memory.
const (
	DefaultMaxParticipants = 64
	// DefaultKeepGrades is how many of a participant's latest grades the
	// room keeps in memory (all are in their recorded session).
	DefaultKeepGrades = 50
)

// Options configure a room.
type Options struct {
	// MaxParticipants caps the participants (0: DefaultMaxParticipants);
	// one more is answered 429.
	MaxParticipants int
	// KeepGrades bounds the grades kept per participant (0: DefaultKeepGrades).
	KeepGrades int
	// Token opens RoomPath (every participant's row) to the teacher; ""
	// closes it to HTTP (serve --workshop --tui reads the room directly).
	Token string
	// Record, when set, keeps each participant's session in the store.
	Record *store.DB
	Now    func() time.Time
	Log    *slog.Logger
}

// Room grades a workshop's requests: it implements sim.Workshop.
type Room struct {
	ex   *Exercise
	opts Options

	mu    sync.Mutex
	parts map[string]*participant
	order []string // participant ids, by arrival
}

type participant struct {
	id, label string
	joined    time.Time
	stepSince time.Time
	step      int // index of the step of the latest graded request, -1 before one
	nextTurn  int // the turn after the latest accepted request's
	requests  int
	grades    []Grade // the latest, oldest first
	rec       *recording
}

// NewRoom opens a room for an exercise.
func NewRoom(ex *Exercise, opts Options) *Room {
	if opts.MaxParticipants <= 0 {
		opts.MaxParticipants = DefaultMaxParticipants
	}
	if opts.KeepGrades <= 0 {
		opts.KeepGrades = DefaultKeepGrades
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Room{ex: ex, opts: opts, parts: map[string]*participant{}}
}

// Close ends every participant's recorded session (done): the room is
// over. Requests graded after it are not recorded.
func (r *Room) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, p := range r.parts {
		if p.rec != nil {
			if err := p.rec.j.Finish(store.StatusDone); err != nil {
				r.opts.Log.Warn("workshop: ending a participant's session", "participant", p.label, "err", err)
			}
		}
	}
	r.opts.Record = nil
}

// Exercise is the room's exercise.
func (r *Room) Exercise() *Exercise { return r.ex }

// Grade implements sim.Workshop.
func (r *Room) Grade(g sim.Graded) (http.Header, string, func(sim.Answer)) {
	now := r.opts.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.parts[g.Participant.ID]
	if p == nil {
		if len(r.parts) >= r.opts.MaxParticipants {
			return nil, fmt.Sprintf("the room is full (%d participants)", r.opts.MaxParticipants), nil
		}
		p = &participant{id: g.Participant.ID, label: g.Participant.Label, joined: now, stepSince: now, step: -1}
		r.parts[p.id] = p
		r.order = append(r.order, p.id)
	}
	turn := g.Turn
	if turn < 0 {
		// Refused before its history was read: a request with results
		// continues the participant's conversation, one without starts one.
		turn = 0
		if e := env(g, 0); len(e["results"].([]any)) > 0 {
			turn = p.nextTurn
		}
	}
	e := env(g, turn)
	var gr Grade
	i, st := r.ex.StepAt(turn)
	if st != nil {
		gr = grade(st, i, e)
	}
	gr.At, gr.Turn, gr.Protocol, gr.Request = now, turn, g.Protocol.Name, summarize(e)
	gr.Status = http.StatusOK
	if g.Rejected != nil {
		gr.Status = g.Rejected.Status
	} else {
		p.nextTurn = turn + 1
	}
	if i != p.step {
		p.step, p.stepSince = i, now
	}
	p.requests++
	p.grades = append(p.grades, gr)
	if over := len(p.grades) - r.opts.KeepGrades; over > 0 {
		p.grades = slices.Delete(p.grades, 0, over)
	}
	var answered func(sim.Answer)
	if r.opts.Record != nil {
		answered = r.record(p, g, gr)
	}
	h := http.Header{}
	h.Set(GradeHeader, gr.Header())
	if len(gr.Failed) > 0 {
		f := gr.Failed[0]
		h.Set(HintHeader, f.Section+" "+f.Hint.EN)
	}
	return h, "", answered
}

// record numbers the request in the participant's session (in the order
// requests are graded) and returns what records it with its answer.
func (r *Room) record(p *participant, g sim.Graded, gr Grade) func(sim.Answer) {
	if p.rec == nil {
		p.rec = newRecording(r.opts.Record, r.ex, p.label, g.Protocol.Name, g.Protocol.Declared(g.Path, parseBody(g.Body)).Model)
	}
	rec := p.rec
	rec.n++
	turn := rec.n
	known := redact.Collect(g.Header)
	return func(a sim.Answer) {
		if err := rec.add(turn, g, known, gr, a); err != nil {
			r.opts.Log.Warn("workshop: recording a participant's request", "participant", p.label, "err", err)
		}
	}
}

// Row is one participant as the room view shows them.
type Row struct {
	Participant string `json:"participant"`
	Step        int    `json:"step"` // 1-based; 0 before a graded step
	StepID      string `json:"step_id"`
	Passed      int    `json:"passed"`
	Total       int    `json:"total"`
	// LastFail is the latest graded request's first failing check, with
	// its hint; "" when it passed.
	LastFail  string  `json:"last_fail"`
	Hint      Text    `json:"hint"`
	Section   string  `json:"section"`
	Detail    string  `json:"detail,omitempty"`
	OnStep    float64 `json:"on_step_s"` // seconds on the current step
	Requests  int     `json:"requests"`
	SessionID string  `json:"session_id,omitempty"`
	Protocol  string  `json:"protocol,omitempty"`
	// Request is the latest request in canonical words (Grade.Request).
	Request string `json:"request,omitempty"`
}

// View is the room as the teacher sees it.
type View struct {
	Exercise     string  `json:"exercise"`
	Title        Text    `json:"title"`
	Steps        []Step  `json:"steps"`
	Participants []Row   `json:"participants"`
	Summary      Summary `json:"summary"`
}

// Summary says where the room is: the check it fails most (counted over
// each participant's latest grade) and the step most are on.
type Summary struct {
	MostFailed      string `json:"most_failed"`
	MostFailedCount int    `json:"most_failed_count"`
	MostFailedHint  Text   `json:"most_failed_hint"`
	StuckStep       int    `json:"stuck_step"`
	StuckCount      int    `json:"stuck_count"`
}

// Me is what one participant sees of their own work.
type Me struct {
	Row
	Exercise string   `json:"exercise"`
	Title    Text     `json:"title"`
	Expect   string   `json:"expect,omitempty"`
	Failed   []Result `json:"failed"`
	Grades   []Grade  `json:"grades"`
}

func (r *Room) row(p *participant, now time.Time) Row {
	row := Row{Participant: p.label, Requests: p.requests, OnStep: now.Sub(p.stepSince).Seconds()}
	if p.step >= 0 {
		row.Step, row.StepID = p.step+1, r.ex.Steps[p.step].ID
	}
	if n := len(p.grades); n > 0 {
		g := p.grades[n-1]
		row.Passed, row.Total, row.Protocol, row.Request = g.Passed, g.Total, g.Protocol, g.Request
		if len(g.Failed) > 0 {
			f := g.Failed[0]
			row.LastFail, row.Hint, row.Section, row.Detail = f.Check, f.Hint, f.Section, f.Detail
		}
	}
	if p.rec != nil {
		row.SessionID = p.rec.id()
	}
	return row
}

// View is the room now.
func (r *Room) View() View {
	now := r.opts.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	v := View{Exercise: r.ex.Name, Title: r.ex.Title, Steps: r.ex.Steps, Participants: []Row{}}
	fails, hints := map[string]int{}, map[string]Text{}
	steps := map[int]int{}
	for _, id := range r.order {
		p := r.parts[id]
		v.Participants = append(v.Participants, r.row(p, now))
		if n := len(p.grades); n > 0 {
			for _, f := range p.grades[n-1].Failed {
				fails[f.Check]++
				hints[f.Check] = f.Hint
			}
		}
		if p.step >= 0 {
			steps[p.step+1]++
		}
	}
	for id, n := range fails {
		if n > v.Summary.MostFailedCount || (n == v.Summary.MostFailedCount && id < v.Summary.MostFailed) {
			v.Summary.MostFailed, v.Summary.MostFailedCount, v.Summary.MostFailedHint = id, n, hints[id]
		}
	}
	for s, n := range steps {
		if n > v.Summary.StuckCount || (n == v.Summary.StuckCount && s < v.Summary.StuckStep) {
			v.Summary.StuckStep, v.Summary.StuckCount = s, n
		}
	}
	return v
}

// MeOf is what participant id sees; false when they sent nothing yet.
func (r *Room) MeOf(id string) (Me, bool) {
	now := r.opts.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.parts[id]
	if p == nil {
		return Me{}, false
	}
	m := Me{Row: r.row(p, now), Exercise: r.ex.Name, Title: r.ex.Title, Grades: slices.Clone(p.grades), Failed: []Result{}}
	if n := len(p.grades); n > 0 {
		m.Failed = p.grades[n-1].Failed
	}
	if p.step >= 0 {
		m.Expect = r.ex.Steps[p.step].Expect
	}
	slices.SortStableFunc(m.Grades, func(a, b Grade) int { return cmp.Compare(b.At.UnixNano(), a.At.UnixNano()) })
	return m, true
}

// ServeWorkshop implements sim.Workshop: GET MePath answers the
// participant the request names (by its key and ParticipantHeader, as
// their requests were named) with their own grades; GET RoomPath, with
// the teacher's token, the whole room.
func (r *Room) ServeWorkshop(w http.ResponseWriter, req *http.Request, p sim.Participant) {
	if req.Method != http.MethodGet {
		writeJSON(w, http.StatusMethodNotAllowed, map[string]string{"error": "only GET"})
		return
	}
	switch req.URL.Path {
	case MePath:
		me, ok := r.MeOf(p.ID)
		if !ok {
			writeJSON(w, http.StatusNotFound, map[string]string{"error": "no request from you yet: send the same key (and " + sim.ParticipantHeader + ") your program sends"})
			return
		}
		writeJSON(w, http.StatusOK, me)
	case RoomPath:
		got := req.Header.Get(TokenHeader)
		if r.opts.Token == "" || subtle.ConstantTimeCompare([]byte(got), []byte(r.opts.Token)) != 1 {
			writeJSON(w, http.StatusForbidden, map[string]string{"error": "the room view needs the teacher's token in " + TokenHeader})
			return
		}
		writeJSON(w, http.StatusOK, r.View())
	default:
		writeJSON(w, http.StatusNotFound, map[string]string{"error": "the workshop serves GET " + MePath + " and " + RoomPath})
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	b, _ := json.Marshal(v)
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(append(b, '\n'))
}
