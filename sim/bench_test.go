package sim_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	_ "net/http/pprof" // MODELWIRE_BENCH_PPROF
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/adapters/adapterstest"
	"github.com/modelwire/modelwire/samples"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/sim"
	"github.com/modelwire/modelwire/transport"
)

// The simulator's throughput on the refund loop: the case's three requests
// (one call; two parallel calls; the final answer) replayed as a client
// sends them, per protocol, streaming and not, reported as requests a
// second. With MODELWIRE_AIMOCK=1 the same requests, through the same
// client, also go to @copilotkit/aimock (installed with npm into a
// temporary directory, serving an equivalent three-turn fixture set), in
// slices of 50 loops taking turns with the simulator's (sim-vs-aimock/…:
// req/s and srv-µs/req are the simulator's, ref-req/s and ref-srv-µs/req
// aimock's, ratio the simulator's rate over aimock's). aimock streams
// text in 20 character chunks by default, the simulator in token-sized
// deltas (4.6 characters on average over the refund answer), so streams
// are also compared with aimock-c5, aimock sending 5-character chunks:
// the same content in about as many events.
//
//	go test ./sim -run '^$' -bench RefundLoop -benchtime 600x
//	MODELWIRE_AIMOCK=1 go test ./sim -run '^$' -bench RefundLoop -benchtime 600x
//
// The client (benchclient_test.go) holds 8 keep-alive connections to each
// server (MODELWIRE_BENCH_CONNS sets another number).
//
// MODELWIRE_BENCH_PPROF=127.0.0.1:6061 serves the simulator process's
// pprof endpoints there, to profile the server under this load.
//
// Both servers run as processes of their own (the simulator in this test
// binary, re-run with MODELWIRE_BENCH_SERVE set), on loopback HTTP/1.1
// with keep-alive; the client reads every response body to its end and
// checks the status. Besides req/s, each run reports srv-µs/req, the CPU
// time the server process spent per request (from /proc): the clients'
// rate follows whatever else the machine runs, a server's cost does not,
// so its inverse (requests per CPU-second) compares the servers where the
// machine is shared.

// aimockVersion is the aimock release the comparison installs.
const aimockVersion = "1.43.0"

// benchProtocols are the protocols both servers speak (aimock has no
// DeepSeek path; the simulator's DeepSeek shares Chat's code).
var benchProtocols = []string{adapters.OpenAIResponses, adapters.OpenAIChat, adapters.AnthropicMessages, adapters.Gemini, adapters.DeepSeekChat}

func BenchmarkRefundLoop(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	loops := refundLoops(b, ctx)
	simServer := startServer(b, ctx, os.Args[0], []string{"-test.run=^TestServeForBenchmark$"}, "MODELWIRE_BENCH_SERVE=1")
	var aimock, aimock5 server
	if os.Getenv("MODELWIRE_AIMOCK") != "" {
		dir := installAimock(b, ctx)
		aimock, aimock5 = startAimock(b, ctx, dir, 20), startAimock(b, ctx, dir, 5)
	}
	for _, l := range loops {
		if aimock.base == "" || l.protocol == adapters.DeepSeekChat {
			b.Run("sim/"+l.name, func(b *testing.B) { load(b, l, simServer) })
			continue
		}
		b.Run("sim-vs-aimock/"+l.name, func(b *testing.B) { load(b, l, simServer, aimock) })
		if l.stream {
			b.Run("sim-vs-aimock-c5/"+l.name, func(b *testing.B) { load(b, l, simServer, aimock5) })
		}
	}
}

// benchLoop is the refund loop of one protocol and mode, as sent.
type benchLoop struct {
	name, protocol string // name: protocol/stream or protocol/body
	stream         bool
	requests       []*adapters.HTTPRequest
}

// refundLoops records the refund loop of every benchmarked protocol, each
// streamed and not, against a simulator of this process.
func refundLoops(b *testing.B, ctx context.Context) []benchLoop {
	sc, err := samples.Lookup("refund")
	if err != nil {
		b.Fatal(err)
	}
	recorder, err := sim.New(sim.Options{Scenario: sc}).Start(ctx, "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	var loops []benchLoop
	for _, protocol := range benchProtocols {
		for _, stream := range []bool{true, false} {
			mode := "stream"
			if !stream {
				mode = "body"
			}
			loops = append(loops, benchLoop{protocol + "/" + mode, protocol, stream, recordLoop(b, sc, recorder, protocol, stream)})
		}
	}
	return loops
}

// recordLoop runs the refund case once against the simulator and keeps
// the three requests the session sent.
func recordLoop(b *testing.B, sc *session.Scenario, base, protocol string, stream bool) []*adapters.HTTPRequest {
	b.Helper()
	cfg := session.Config{Scenario: sc, Protocol: protocol, Provider: transport.Provider{Name: adapters.ProviderSim, BaseURL: base, Key: "sim-key"},
		Stream: stream, History: adapters.HistoryFull, Policy: session.PolicyAuto}
	s, err := session.New(cfg, nil, nil, nil)
	if err != nil {
		b.Fatal(err)
	}
	res, err := s.Run(context.Background())
	if err != nil {
		b.Fatal(err)
	}
	if len(res.Requests) != 3 {
		b.Fatalf("%s: the refund loop sent %d requests, want 3", protocol, len(res.Requests))
	}
	return res.Requests
}

// load replays the loop b.N times against each server and reports
// requests a second, and each server process's CPU time per request
// (srv-µs/req): on a machine that other work shares, the clients' rate
// follows its load, while the CPU a server spends on a request does not.
// Against two servers the loops alternate between them in slices of
// benchSlice, so that whatever else the machine runs meanwhile weighs on
// both alike, and the ratio of their rates is reported too.
func load(b *testing.B, l benchLoop, servers ...server) {
	clients := make([]*benchClient, len(servers))
	for i, srv := range servers {
		c, err := newBenchClient(srv, l)
		if err != nil {
			b.Fatal(err)
		}
		defer c.close()
		if err := c.run(1); err != nil { // once untimed: both servers must answer every turn
			b.Fatal(err)
		}
		c.reset()
		clients[i] = c
	}
	b.ResetTimer()
	for done := 0; done < b.N; done += benchSlice {
		for _, c := range clients {
			if err := c.run(min(benchSlice, b.N-done)); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.StopTimer()
	names := []string{"", "ref-"}
	for i, c := range clients {
		b.ReportMetric(c.rate(), names[i]+"req/s")
		if us := c.serverMicros(); us > 0 {
			b.ReportMetric(us, names[i]+"srv-µs/req")
		}
	}
	if len(clients) == 2 {
		b.ReportMetric(clients[0].rate()/clients[1].rate(), "ratio")
	}
}

// benchSlice is how many loops one server gets before the other's turn.
const benchSlice = 50

// installAimock installs aimock into a temporary directory and writes the
// refund loop there as its fixtures.
func installAimock(b *testing.B, ctx context.Context) string {
	b.Helper()
	dir := b.TempDir()
	install := exec.CommandContext(ctx, "npm", "install", "--no-audit", "--no-fund", "--silent", "@copilotkit/aimock@"+aimockVersion)
	install.Dir = dir
	if out, err := install.CombinedOutput(); err != nil {
		b.Fatalf("npm install @copilotkit/aimock: %v\n%s", err, out)
	}
	if err := os.WriteFile(filepath.Join(dir, "refund.json"), aimockFixtures(b), 0o644); err != nil {
		b.Fatal(err)
	}
	return dir
}

// startAimock serves the refund fixtures, streaming text in chunk-character
// pieces.
func startAimock(b *testing.B, ctx context.Context, dir string, chunk int) server {
	return startServer(b, ctx, "node", []string{filepath.Join(dir, "node_modules/@copilotkit/aimock/dist/cli.js"),
		"-f", filepath.Join(dir, "refund.json"), "--chunk-size", fmt.Sprint(chunk), "--log-level", "silent", "-p"}, "")
}

// server is a server process of the benchmark.
type server struct {
	base string
	pid  int
}

// cpuTime is the CPU time the process has used so far (user and system,
// all its threads), from /proc; 0 where there is no /proc.
func (s server) cpuTime() time.Duration {
	stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", s.pid))
	if err != nil {
		return 0
	}
	// The fields after the command name (which may hold spaces): state is
	// field 3, utime and stime fields 14 and 15, in clock ticks of 1/100 s
	// (USER_HZ on Linux).
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(string(stat[i+1:]))
	if len(f) < 13 {
		return 0
	}
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * 10 * time.Millisecond
}

// startServer runs a server process on a free port (its last argument)
// and waits until it answers.
func startServer(b *testing.B, ctx context.Context, name string, args []string, env string) server {
	b.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := fmt.Sprint(ln.Addr().(*net.TCPAddr).Port)
	ln.Close()
	cmd := exec.CommandContext(ctx, name, append(args, port)...)
	cmd.Env = append(os.Environ(), "MODELWIRE_BENCH_PORT="+port)
	if env != "" {
		cmd.Env = append(cmd.Env, env)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	base := "http://127.0.0.1:" + port
	for start := time.Now(); ; time.Sleep(50 * time.Millisecond) {
		if resp, err := http.Get(base + "/health"); err == nil {
			resp.Body.Close()
			return server{base: base, pid: cmd.Process.Pid}
		}
		if time.Since(start) > 30*time.Second {
			b.Fatalf("%s did not start", name)
		}
	}
}

// TestServeForBenchmark is the benchmark's simulator process: with
// MODELWIRE_BENCH_SERVE set it serves the refund case on
// MODELWIRE_BENCH_PORT until killed; otherwise it is skipped.
func TestServeForBenchmark(t *testing.T) {
	if os.Getenv("MODELWIRE_BENCH_SERVE") == "" {
		t.Skip("the benchmark's server process")
	}
	sc, err := samples.Lookup("refund")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := sim.New(sim.Options{Scenario: sc}).Start(context.Background(), "127.0.0.1:"+os.Getenv("MODELWIRE_BENCH_PORT")); err != nil {
		t.Fatal(err)
	}
	if addr := os.Getenv("MODELWIRE_BENCH_PPROF"); addr != "" {
		// The server process's own profile, while the benchmark runs:
		// go tool pprof http://ADDR/debug/pprof/profile?seconds=10
		go func() { t.Log(http.ListenAndServe(addr, nil)) }()
	}
	select {}
}

// aimockFixtures is the refund loop in aimock's fixture language: the
// first request (no tool result yet) gets the order-line call, the one
// that carries the order line's result gets the two parallel calls, the
// one that carries the policy's result gets the final answer (fixtures
// are tried in order).
func aimockFixtures(b *testing.B) []byte {
	type call struct {
		Name      string          `json:"name"`
		Arguments json.RawMessage `json:"arguments"`
	}
	calls := func(cs []adapterstest.RefundCall) []call {
		out := make([]call, len(cs))
		for i, c := range cs {
			out[i] = call{c.Name, json.RawMessage(c.Arguments)}
		}
		return out
	}
	// The results are matched by their evidence ids, read from the
	// chapter's results so the fixtures follow them.
	evidence := func(result string) string {
		var r struct {
			EvidenceID string `json:"evidence_id"`
		}
		if err := json.Unmarshal([]byte(result), &r); err != nil || r.EvidenceID == "" {
			b.Fatalf("a refund result without evidence_id: %s", result)
		}
		return r.EvidenceID
	}
	fx := map[string]any{"fixtures": []any{
		map[string]any{"match": map[string]any{"toolResultContains": evidence(adapterstest.RefundTurn2[1].Result)},
			"response": map[string]any{"content": adapterstest.RefundModelText}},
		map[string]any{"match": map[string]any{"toolResultContains": evidence(adapterstest.RefundTurn1[0].Result)},
			"response": map[string]any{"toolCalls": calls(adapterstest.RefundTurn2)}},
		map[string]any{"match": map[string]any{"hasToolResult": false},
			"response": map[string]any{"toolCalls": calls(adapterstest.RefundTurn1)}},
	}}
	out, err := json.Marshal(fx)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkServeInProcess is the simulator's own cost per request on the
// refund loop, in process (no sockets, no client): what a CPU profile of
// the server should look at.
//
//	go test ./sim -run '^$' -bench ServeInProcess -cpuprofile cpu.out
func BenchmarkServeInProcess(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	loops := refundLoops(b, ctx)
	sc, _ := samples.Lookup("refund")
	srv := sim.New(sim.Options{Scenario: sc})
	for _, l := range loops {
		b.Run(l.name, func(b *testing.B) {
			for b.Loop() {
				for _, w := range l.requests {
					req := httptest.NewRequest(w.Method, w.Path, bytes.NewReader(w.Body))
					for k, v := range w.Headers {
						req.Header.Set(k, v)
					}
					rec := httptest.NewRecorder()
					srv.ServeHTTP(rec, req)
					if rec.Code != http.StatusOK {
						b.Fatalf("%s %s: %d %.300s", w.Method, w.Path, rec.Code, rec.Body.Bytes())
					}
				}
			}
			b.ReportMetric(float64(b.N*len(l.requests))/b.Elapsed().Seconds(), "req/s")
		})
	}
}
