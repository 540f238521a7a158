package session

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/transport"
)

// Sending one turn: its attempts, retries on the provider's signals, and
// how a transport failure is named.

// transportOutcome is what the attempts of one turn came to.
type transportOutcome struct {
	status     int
	err        string
	retries    []string
	errSummary *adapters.Summary
	// note says why a retryable error was not retried (the wait it asked
	// for is beyond the budget).
	note string
}

// send makes the turn's attempts: retrying retryable statuses with
// Retry-After or backoff, never re-running a stream that broke after it
// started. It returns the reducer of the response that was read, or nil
// when no response body was decoded (the error is in the outcome).
func (s *Session) send(ctx context.Context, turn int, wire *adapters.HTTPRequest) (*adapters.Reducer, transportOutcome, error) {
	var out transportOutcome
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		red, status, advice, apiErr, terr, err := s.attempt(ctx, turn, attempt, wire)
		if err != nil {
			return nil, out, err
		}
		out.status = status
		out.err = terr
		if red != nil {
			return red, out, nil
		}
		if apiErr != nil {
			sum := adapters.Summary{Protocol: s.cfg.Protocol, Terminal: adapters.StatusFailed, StopReason: adapters.StopError, Error: apiErr}
			out.errSummary = &sum
		}
		if terr != "" || !advice.retry || attempt > s.cfg.Retry.Max || ctx.Err() != nil {
			return nil, out, nil
		}
		wait := s.cfg.Retry.Delay(attempt-1, advice.after)
		if left := s.cfg.Retry.Budget - waited; s.cfg.Retry.Budget > 0 && wait > left {
			out.note = fmt.Sprintf("not retried: the provider asked to wait %s, beyond the %s left of the retry budget", wait.Round(time.Millisecond), max(left, 0).Round(time.Millisecond))
			return nil, out, nil
		}
		waited += wait
		why := fmt.Sprintf("HTTP %d", status)
		if apiErr != nil && apiErr.Type != "" {
			why += " " + apiErr.Type
		}
		out.retries = append(out.retries, why)
		if err := s.emit(Update{Kind: UpAttempt, Turn: turn, Attempt: attempt, HTTPStatus: status, RetryIn: wait, Err: "retrying in " + wait.Round(time.Millisecond).String()}); err != nil {
			return nil, out, err
		}
		if err := s.sleep(ctx, wait); err != nil {
			out.err = "cancelled"
			return nil, out, nil
		}
	}
}

// retryAdvice is what an error response says about sending the request
// again: whether to (transport.ShouldRetry), and not before when (Retry-After).
type retryAdvice struct {
	retry bool
	after time.Duration
}

// attempt makes one HTTP request and reads its response.
func (s *Session) attempt(ctx context.Context, turn, n int, wire *adapters.HTTPRequest) (red *adapters.Reducer, status int, retry retryAdvice, apiErr *adapters.APIError, transportErr string, err error) {
	url := s.cfg.Provider.URL(wire.Path)
	limits := s.cfg.Timeouts
	if s.cfg.Pause != nil {
		limits.Total = 0 // a walkthrough may rest on a step for as long as the class needs
	}
	actx, wd := transport.NewWatchdog(ctx, limits)
	defer wd.Stop()
	hreq, err := http.NewRequestWithContext(actx, wire.Method, url, bytes.NewReader(wire.Body))
	if err != nil {
		return nil, 0, retryAdvice{}, nil, "", fmt.Errorf("building the request: %w", err)
	}
	for k, v := range wire.Headers {
		hreq.Header.Set(k, v)
	}
	s.cfg.Provider.Authorize(hreq.Header, s.cfg.Protocol)
	sent := s.now()
	// Time a person spends on a paused step is not the provider's: it is
	// left out of the attempt's timings.
	var pausedFor time.Duration
	since := func() float64 { return float64((s.now().Sub(sent) - pausedFor).Microseconds()) / 1000 }
	timings := &Timings{}
	resp, herr := s.cfg.Client.Do(hreq)
	if herr != nil {
		msg := s.seal.All(transport.Describe(actx, herr))
		return nil, 0, retryAdvice{}, nil, msg, s.emit(Update{Kind: UpAttempt, Turn: turn, Attempt: n, URL: url, Err: msg, Header: hreq.Header})
	}
	defer resp.Body.Close()
	timings.Headers = since()
	timings.Server = ServerTimeOf(s.cfg.Protocol, resp.Header)
	status = resp.StatusCode
	if status < 200 || status > 299 {
		body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
		apiErr = s.protocol.DecodeError(status, resp.Header, body)
		retry = retryAdvice{retry: transport.ShouldRetry(status, resp.Header), after: adapters.RetryAfter(resp.Header, s.now())}
		return nil, status, retry, apiErr, "", s.emit(Update{Kind: UpAttempt, Turn: turn, Attempt: n, URL: url, HTTPStatus: status,
			Header: resp.Header, APIError: apiErr, ResponseBody: body, Timings: timings})
	}
	if err := s.emit(Update{Kind: UpAttempt, Turn: turn, Attempt: n, URL: url, HTTPStatus: status, Header: resp.Header, Timings: timings}); err != nil {
		return nil, status, retryAdvice{}, nil, "", err
	}
	// While a person reads a paused step, the limits must not fire.
	paused := func(step string) error {
		if s.cfg.Pause == nil {
			return nil
		}
		wd.Hold()
		defer wd.Event()
		start := s.now()
		defer func() { pausedFor += s.now().Sub(start) }()
		return s.pause(ctx, step, turn)
	}
	if err := paused(StepSent); err != nil {
		return nil, status, retryAdvice{}, nil, "", err
	}
	st := adapters.NewStream(s.protocol)
	ct := resp.Header.Get("Content-Type")
	if !strings.HasPrefix(ct, "text/event-stream") {
		body, rerr := io.ReadAll(resp.Body)
		if rerr != nil {
			transportErr = "reading the body: " + s.seal.All(transport.Describe(actx, rerr))
		}
		wd.Event()
		timings.FirstEvent = since()
		step := adapters.Step{Index: 0, Raw: adapters.RawEvent{Data: string(body)}, Events: st.FeedBody(body)}
		timings.MarkTokens(step.Events, timings.FirstEvent)
		timings.Terminal = since()
		if err := s.emit(Update{Kind: UpStep, Turn: turn, Attempt: n, Step: &step, OffsetMS: timings.FirstEvent, Timings: timings}); err != nil {
			return nil, status, retryAdvice{}, nil, "", err
		}
		return st.Reducer(), status, retryAdvice{}, nil, transportErr, nil
	}
	err = adapters.ReadStream(s.protocol, st, resp.Body, func(step adapters.Step) error {
		off := since()
		first := false
		if step.Index >= 0 {
			wd.Event()
			if timings.FirstEvent == 0 {
				timings.FirstEvent = off
				first = true
			}
		}
		timings.MarkTokens(step.Events, off)
		if timings.Terminal == 0 && st.Reducer().Done() {
			timings.Terminal = off
		}
		u := Update{Kind: UpStep, Turn: turn, Attempt: n, Step: &step, OffsetMS: off}
		if step.Index < 0 {
			u.Timings = timings
		}
		if err := s.emit(u); err != nil {
			return err
		}
		if first {
			return paused(StepFirstEvent)
		}
		return nil
	})
	if err != nil {
		return nil, status, retryAdvice{}, nil, "", err
	}
	if cause := context.Cause(actx); cause != nil && !errors.Is(cause, context.Canceled) {
		transportErr = s.seal.All(transport.Describe(actx, cause))
	} else if d := readErrorDiag(st); d != "" {
		transportErr = "the stream broke: " + d
	}
	return st.Reducer(), status, retryAdvice{}, nil, transportErr, nil
}

func readErrorDiag(st *adapters.Stream) string {
	for _, d := range st.Summary().Diagnostics {
		if d.Kind == adapters.DiagReadError {
			return d.Detail
		}
	}
	return ""
}

// MarkTokens sets the first output token and the first visible text at
// off when a step's events carry them and they are not set yet.
func (t *Timings) MarkTokens(evs []adapters.Event, off float64) {
	for i := range evs {
		if t.FirstToken == 0 && adapters.IsOutputToken(&evs[i]) {
			t.FirstToken = off
		}
		if t.FirstText == 0 && adapters.IsVisibleText(&evs[i]) {
			t.FirstText = off
		}
	}
}
