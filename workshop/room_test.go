package workshop_test

import (
	"fmt"
	"net/http"
	"runtime"
	"strings"
	"testing"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/workshop"
)

// firstBody is the refund case's first request as modelwire assembles it.
func firstBody(t testing.TB) (adapters.Descriptor, *adapters.HTTPRequest) {
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	d, _ := registry.Describe(registry.Default)
	req, err := d.New().Encode(sc.Request(false, adapters.HistoryFull), adapters.ProviderSim)
	if err != nil {
		t.Fatal(err)
	}
	return d, req
}

// graded is a request from key/name as the simulator hands it over,
// refused before it was read (the room then reads it leniently).
func graded(d adapters.Descriptor, req *adapters.HTTPRequest, key, name string) sim.Graded {
	r, _ := http.NewRequest(http.MethodPost, "http://x"+req.Path, nil)
	r.Header.Set("Authorization", "Bearer "+key)
	r.Header.Set(sim.ParticipantHeader, name)
	rej := &adapters.SimError{Status: 400, Body: []byte(`{"error":{"message":"` + strings.Repeat("no ", 400) + `"}}`)}
	return sim.Graded{Participant: sim.ParticipantOf(r), Protocol: d, Path: req.Path, Header: r.Header, Body: req.Body, Turn: -1, Rejected: rej}
}

// TestParticipantIdentity: a participant is a hash of key and name, never
// the key; the same name with another key is someone else; a label is
// short and printable.
func TestParticipantIdentity(t *testing.T) {
	mk := func(key, name string) sim.Participant {
		r, _ := http.NewRequest(http.MethodGet, "http://x/workshop/me", nil)
		if key != "" {
			r.Header.Set("Authorization", "Bearer "+key)
		}
		r.Header.Set(sim.ParticipantHeader, name)
		return sim.ParticipantOf(r)
	}
	a, b := mk("sk-alice-secret", "alice"), mk("sk-bob-secret", "alice")
	if a.ID == b.ID || strings.Contains(a.ID, "alice") || strings.Contains(a.ID, "secret") || a.Label != "alice" {
		t.Errorf("ids %q %q, label %q", a.ID, b.ID, a.Label)
	}
	if l := mk("k", "x\x1b[31m"+strings.Repeat("长", 60)).Label; strings.ContainsRune(l, '\x1b') || len([]rune(l)) != 40 {
		t.Errorf("label %q", l)
	}
	if l := mk("sk-carol-secret", "").Label; !strings.HasPrefix(l, "p-") {
		t.Errorf("a participant without a name is labelled %q", l)
	}
}

// TestRoomBoundsGrades: a participant's grades are the latest
// KeepGrades; details are cut short.
func TestRoomBoundsGrades(t *testing.T) {
	ex, _ := workshop.Lookup("refund-1", nil)
	room := workshop.NewRoom(ex, workshop.Options{KeepGrades: 5})
	d, req := firstBody(t)
	g := graded(d, req, "sk-one-secret", "one")
	for range 12 {
		room.Grade(g)
	}
	me, ok := room.MeOf(g.Participant.ID)
	if !ok || len(me.Grades) != 5 || me.Requests != 12 {
		t.Fatalf("kept %d grades of %d requests, want 5 of 12", len(me.Grades), me.Requests)
	}
	for _, f := range me.Failed {
		if len(f.Detail) > 310 {
			t.Errorf("a detail of %d bytes", len(f.Detail))
		}
	}
}

// TestRoomMemoryIsBounded fills a room to its cap, every participant far
// past the grades kept, each request failing checks with long details,
// and measures what the room holds.
func TestRoomMemoryIsBounded(t *testing.T) {
	ex, _ := workshop.Lookup("refund-3", nil)
	room := workshop.NewRoom(ex, workshop.Options{})
	d, req := firstBody(t)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	for p := range workshop.DefaultMaxParticipants + 10 {
		g := graded(d, req, fmt.Sprintf("sk-%d-secret", p), fmt.Sprint("p", p))
		for range workshop.DefaultKeepGrades * 2 {
			room.Grade(g)
		}
	}
	runtime.GC()
	runtime.ReadMemStats(&after)
	held := int64(after.HeapAlloc) - int64(before.HeapAlloc)
	t.Logf("a full room (%d participants × %d grades kept): %.1f MB of heap", workshop.DefaultMaxParticipants, workshop.DefaultKeepGrades, float64(held)/(1<<20))
	if n := len(room.View().Participants); n != workshop.DefaultMaxParticipants {
		t.Errorf("%d participants, want the cap %d", n, workshop.DefaultMaxParticipants)
	}
	if held > 32<<20 {
		t.Errorf("a full room holds %d MB", held>>20)
	}
	runtime.KeepAlive(room)
}
