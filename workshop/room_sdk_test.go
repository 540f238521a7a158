package workshop_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	"github.com/openai/openai-go/v3/responses"

	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/workshop"
)

// mistake is what a participant's program gets wrong.
type mistake int

const (
	correct      mistake = iota
	itemIDAsCall         // sends the output item's id (fc_…) where the call_id goes
	autoFinal            // leaves tool_choice on auto for the final turn
	swapped              // sends parallel results in array order, each to the other call
)

// startRoom serves exercise name's room on a free port, recording into a
// fresh database.
func startRoom(t *testing.T, name string, opts workshop.Options) (base string, room *workshop.Room, db *store.DB, dbPath string) {
	return startRoomWith(t, name, opts, sim.Options{})
}

// startRoomWith is startRoom with the simulator's options (RequireKey…).
func startRoomWith(t *testing.T, name string, opts workshop.Options, so sim.Options) (base string, room *workshop.Room, db *store.DB, dbPath string) {
	t.Helper()
	ex, err := workshop.Lookup(name, func(s string) error { _, err := samples.Lookup(s); return err })
	if err != nil {
		t.Fatal(err)
	}
	sc, err := samples.Lookup(ex.Scenario)
	if err != nil {
		t.Fatal(err)
	}
	dbPath = filepath.Join(t.TempDir(), "room.db")
	db, err = store.Open(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	opts.Record = db
	if opts.Token == "" {
		opts.Token = "teacher-token"
	}
	room = workshop.NewRoom(ex, opts)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	so.Scenario, so.Workshop = sc, room
	base, err = sim.New(so).Start(ctx, "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return base, room, db, dbPath
}

// firstParams is the refund case's first request as a participant writes
// it with the official SDK: rules as instructions, the task and context
// as the user's message, the three strict tools, the strict schema.
func firstParams(t *testing.T, sc *session.Scenario) responses.ResponseNewParams {
	system, task := adapterstest.SDKPrompt(sc.Sources)
	p := responses.ResponseNewParams{
		Model:        responses.ResponsesModel(sc.Model),
		Instructions: openai.String(system),
		Input: responses.ResponseNewParamsInputUnion{OfInputItemList: responses.ResponseInputParam{
			responses.ResponseInputItemParamOfMessage(task, responses.EasyInputMessageRoleUser),
		}},
	}
	for _, tool := range sc.Tools {
		var params map[string]any
		if err := json.Unmarshal(tool.Parameters, &params); err != nil {
			t.Fatal(err)
		}
		p.Tools = append(p.Tools, responses.ToolUnionParam{OfFunction: &responses.FunctionToolParam{
			Name: tool.Name, Description: openai.String(tool.Description), Parameters: params, Strict: openai.Bool(tool.Strict)}})
	}
	o := sc.Output.Sent()
	var schema map[string]any
	if err := json.Unmarshal(o.Schema, &schema); err != nil {
		t.Fatal(err)
	}
	p.Text = responses.ResponseTextConfigParam{Format: responses.ResponseFormatTextConfigUnionParam{
		OfJSONSchema: &responses.ResponseFormatTextJSONSchemaConfigParam{Name: o.Name, Schema: schema, Strict: openai.Bool(true)}}}
	return p
}

// participantRun is one participant's program: the refund loop over the
// Responses API, chained by previous_response_id, with its mistake. It
// returns the grade header of each request it sent.
func participantRun(ctx context.Context, t *testing.T, base, key, name string, m mistake) ([]string, error) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		return nil, err
	}
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(key),
		option.WithHeader(sim.ParticipantHeader, name), option.WithMaxRetries(0))
	p := firstParams(t, sc)
	var grades []string
	for turn := 0; turn < 3; turn++ {
		var hr *http.Response
		resp, err := c.Responses.New(ctx, p, option.WithResponseInto(&hr))
		if err != nil {
			var apiErr *openai.Error
			if errors.As(err, &apiErr) && apiErr.Response != nil {
				grades = append(grades, apiErr.Response.Header.Get(workshop.GradeHeader)+" | "+apiErr.Response.Header.Get(workshop.HintHeader))
				return grades, nil // the provider refused: the program stops here
			}
			return grades, err
		}
		grades = append(grades, hr.Header.Get(workshop.GradeHeader)+" | "+hr.Header.Get(workshop.HintHeader))
		var outputs responses.ResponseInputParam
		var calls []responses.ResponseOutputItemUnion
		for _, it := range resp.Output {
			if it.Type == "function_call" {
				calls = append(calls, it)
			}
		}
		for i, it := range calls {
			content, _ := sc.RunTool(ctx, it.Name, json.RawMessage(it.Arguments.OfString))
			if m == swapped {
				it = calls[len(calls)-1-i] // the result goes to the wrong call
			}
			callID := it.CallID
			if m == itemIDAsCall {
				callID = it.ID
			}
			o := responses.ResponseInputItemParamOfFunctionCallOutput(content)
			o.OfFunctionCallOutput.CallID = openai.String(callID)
			outputs = append(outputs, o)
		}
		if len(outputs) == 0 {
			break
		}
		if m == correct {
			// Alice chains by previous_response_id; the others resend the
			// whole history, the model's calls included.
			p.PreviousResponseID = openai.String(resp.ID)
			p.Input = responses.ResponseNewParamsInputUnion{OfInputItemList: outputs}
		} else {
			for _, it := range resp.Output {
				if it.Type == "function_call" {
					fc := it.AsFunctionCall().ToParam()
					p.Input.OfInputItemList = append(p.Input.OfInputItemList, responses.ResponseInputItemUnionParam{OfFunctionCall: &fc})
				}
			}
			p.Input.OfInputItemList = append(p.Input.OfInputItemList, outputs...)
		}
		if turn == 1 && m != autoFinal {
			// Both observations are in: the final turn forbids new calls.
			p.ToolChoice = responses.ResponseNewParamsToolChoiceUnion{OfToolChoiceMode: openai.Opt(responses.ToolChoiceOptionsNone)}
		}
	}
	return grades, nil
}

// me asks the room for one participant's own view.
func me(t *testing.T, base, key, name string) (workshop.Me, int) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, base+workshop.MePath, nil)
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set(sim.ParticipantHeader, name)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var m workshop.Me
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return m, resp.StatusCode
}

// TestThreeParticipants runs three programs written with the official Go
// SDK at once against one room of refund-3: one correct, one that sends
// the item id where the call_id goes, one that leaves tool_choice on auto
// for the final turn. Each gets the provider's answer with its grade and
// hint in headers, sees only its own grades, and is a session of its own.
func TestThreeParticipants(t *testing.T) {
	base, room, db, dbPath := startRoom(t, "refund-3", workshop.Options{})
	type who struct {
		key, name string
		m         mistake
	}
	people := []who{{"sk-alice-0123456789", "alice", correct}, {"sk-bob-0123456789", "bob", itemIDAsCall}, {"sk-carol-0123456789", "carol", autoFinal}}
	got := make([][]string, len(people))
	errs := make([]error, len(people))
	var wg sync.WaitGroup
	for i, p := range people {
		wg.Add(1)
		go func() {
			defer wg.Done()
			got[i], errs[i] = participantRun(context.Background(), t, base, p.key, p.name, p.m)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("%s: %v", people[i].name, err)
		}
	}

	want := [][]string{
		{"step=1 pass=5/5 | ", "step=2 pass=4/4 | ", "step=3 pass=8/8 | "},
		{"step=1 pass=5/5 | ", "step=2 pass=1/4 fail=call-id-matches,order-result,accepted | 13.2.8 A result's call_id must be the function_call's call_id"},
		{"step=1 pass=5/5 | ", "step=2 pass=4/4 | ", "step=3 pass=7/8 fail=final-tool-choice | 13.6.6 The final turn has its evidence: set tool_choice to none"},
	}
	for i := range people {
		if len(got[i]) != len(want[i]) {
			t.Fatalf("%s: grades %q, want %d requests", people[i].name, got[i], len(want[i]))
		}
		for j := range want[i] {
			if !strings.HasPrefix(got[i][j], want[i][j]) {
				t.Errorf("%s request %d: grade %q, want it to start %q", people[i].name, j+1, got[i][j], want[i][j])
			}
		}
	}

	// Each sees their own grades and hints, in both languages.
	a, st := me(t, base, people[0].key, "alice")
	if st != 200 || a.Participant != "alice" || a.Step != 3 || a.Passed != 8 || a.Total != 8 || len(a.Failed) != 0 || len(a.Grades) != 3 {
		t.Errorf("alice's view: %d %+v", st, a.Row)
	}
	b, _ := me(t, base, people[1].key, "bob")
	if b.Step != 2 || b.LastFail != "call-id-matches" || !strings.Contains(b.Hint.ZH, "call_id") || b.Section != "13.2.8" || b.Expect == "" {
		t.Errorf("bob's view: %+v", b.Row)
	}
	if !strings.Contains(b.Request, "→no such call") || !strings.Contains(b.Request, "refused 400") {
		t.Errorf("bob's latest request, in canonical words: %s", b.Request)
	}
	if len(b.Failed) != 3 || !strings.Contains(b.Failed[2].Detail, "400") {
		t.Errorf("bob's failed checks: %+v", b.Failed)
	}
	c, _ := me(t, base, people[2].key, "carol")
	if c.Step != 3 || c.LastFail != "final-tool-choice" || !strings.Contains(c.Hint.ZH, "tool_choice") {
		t.Errorf("carol's view: %+v", c.Row)
	}
	// Nothing of one participant is visible to another: alice's name with
	// bob's key is someone else, who has sent nothing.
	if _, st := me(t, base, people[1].key, "alice"); st != http.StatusNotFound {
		t.Errorf("alice's name with bob's key: status %d, want 404", st)
	}
	// The room needs the teacher's token.
	resp, err := http.Get(base + workshop.RoomPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusForbidden {
		t.Errorf("the room without the token: %d", resp.StatusCode)
	}
	v := room.View()
	if len(v.Participants) != 3 || v.Summary.StuckStep != 3 || v.Summary.StuckCount != 2 {
		t.Errorf("room: %+v", v.Summary)
	}

	// Each is a session of their own, recorded with the grade of every
	// request as its turn's verdict; the keys never reach the database.
	for i, p := range people {
		m, _ := me(t, base, p.key, p.name)
		if m.SessionID == "" {
			t.Fatalf("%s has no session", p.name)
		}
		s, err := db.GetSession(m.SessionID)
		if err != nil {
			t.Fatal(err)
		}
		if s.Source != workshop.SourceWorkshop || !strings.HasSuffix(s.Title, p.name) || s.Turns != len(want[i]) {
			t.Errorf("%s's session: %+v", p.name, s.SessionInfo)
		}
		// Each request's answer is there as the protocol's events, and
		// each grade as its turn's verdict.
		if failed := s.FailedLayer == "workshop"; failed != (i > 0) {
			t.Errorf("%s's session: failed layer %q", p.name, s.FailedLayer)
		}
		if s.Events < 2*len(want[i]) || s.InputTokens == 0 {
			t.Errorf("%s's session holds %d entries, %d input tokens", p.name, s.Events, s.InputTokens)
		}
	}
	room.Close()
	for _, p := range people {
		m, _ := me(t, base, p.key, p.name)
		if s, err := db.GetSession(m.SessionID); err != nil || s.Status != store.StatusDone {
			t.Errorf("%s's session after the room closed: %v %v", p.name, s.Status, err)
		}
	}
	db.Close()
	raw, err := os.ReadFile(dbPath)
	if err != nil {
		t.Fatal(err)
	}
	wal, _ := os.ReadFile(dbPath + "-wal")
	for _, p := range people {
		if strings.Contains(string(raw)+string(wal), p.key) {
			t.Errorf("%s's key is in the database", p.name)
		}
	}
}

// TestRoomIsCapped: one participant more than --max-participants gets the
// provider's 429, and is not graded.
func TestRoomIsCapped(t *testing.T) {
	base, room, _, _ := startRoom(t, "refund-1", workshop.Options{MaxParticipants: 2})
	sc, _ := samples.Lookup("refund")
	for i := range 3 {
		c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(fmt.Sprintf("sk-person-%d-secret", i)), option.WithMaxRetries(0))
		_, err := c.Responses.New(context.Background(), firstParams(t, sc))
		var apiErr *openai.Error
		switch {
		case i < 2 && err != nil:
			t.Fatalf("participant %d: %v", i+1, err)
		case i == 2 && (!errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests || !strings.Contains(apiErr.Message, "room is full")):
			t.Fatalf("the third participant: %v", err)
		}
	}
	if n := len(room.View().Participants); n != 2 {
		t.Errorf("%d participants, want 2", n)
	}
}

// TestRequireKeyBeforeGrading: with --require-key a request without a
// key gets the provider's 401 and is neither graded nor a participant.
func TestRequireKeyBeforeGrading(t *testing.T) {
	base, room, _, _ := startRoomWith(t, "refund-1", workshop.Options{}, sim.Options{RequireKey: true})
	sc, _ := samples.Lookup("refund")
	c := openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey(""), option.WithMaxRetries(0))
	var hr *http.Response
	_, err := c.Responses.New(context.Background(), firstParams(t, sc), option.WithResponseInto(&hr))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusUnauthorized || apiErr.Response.Header.Get(workshop.GradeHeader) != "" {
		t.Fatalf("a request without a key: %v", err)
	}
	if n := len(room.View().Participants); n != 0 {
		t.Errorf("%d participants after a keyless request", n)
	}
	c = openai.NewClient(option.WithBaseURL(base+"/v1/"), option.WithAPIKey("sk-dana-0123456789"), option.WithMaxRetries(0))
	if _, err := c.Responses.New(context.Background(), firstParams(t, sc), option.WithResponseInto(&hr)); err != nil || hr.Header.Get(workshop.GradeHeader) != "step=1 pass=8/8" {
		t.Fatalf("a keyed request: %v %q", err, hr.Header.Get(workshop.GradeHeader))
	}
}

// TestParallelResultsByCallID: refund-2 catches a program that pairs the
// two parallel calls' results by array order the wrong way round (the
// ledger's result on the policy call).
func TestParallelResultsByCallID(t *testing.T) {
	base, _, _, _ := startRoom(t, "refund-2", workshop.Options{})
	grades, err := participantRun(context.Background(), t, base, "sk-erin-0123456789", "erin", swapped)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"step=1 pass=3/3 | ", "step=2 pass=5/5 | ", "step=3 pass=5/7 fail=ledger-by-id,policy-by-id | 13.6.5 Correlate by call_id, never by array order"}
	if len(grades) != len(want) {
		t.Fatalf("grades %q", grades)
	}
	for i := range want {
		if !strings.HasPrefix(grades[i], want[i]) {
			t.Errorf("request %d: %q, want it to start %q", i+1, grades[i], want[i])
		}
	}
}
