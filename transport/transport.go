// Package transport is how a session's requests reach a provider: where
// the provider is and its key (Provider, resolved from flags and the
// environment by the protocols' descriptors), the HTTP client, the four
// limits of an attempt and the watchdog that enforces them, the retry
// policy, and what an HTTP error or a failed connection means. It knows
// the wire formats only through their descriptors (adapters/registry);
// the engine (session) makes its attempts with it.
package transport

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"time"
)

// Timeouts are the four separate limits of one attempt. Zero means none.
type Timeouts struct {
	Connect    time.Duration `json:"connect"`
	FirstEvent time.Duration `json:"first_event"`
	Idle       time.Duration `json:"idle"`
	Total      time.Duration `json:"total"`
}

// DefaultTimeouts are generous enough for real providers.
var DefaultTimeouts = Timeouts{Connect: 10 * time.Second, FirstEvent: 60 * time.Second, Idle: 60 * time.Second, Total: 10 * time.Minute}

// TimeoutError names the limit that fired.
type TimeoutError struct {
	Limit string // "connect", "first-event", "idle", "total"
	After time.Duration
}

func (e *TimeoutError) Error() string {
	return fmt.Sprintf("%s timeout (%s)", e.Limit, e.After)
}

// Retry bounds automatic retries of retryable HTTP errors.
type Retry struct {
	Max      int
	Base     time.Duration
	MaxDelay time.Duration
	// Budget is the most a session waits between attempts in all. A
	// Retry-After beyond what is left is not shortened (the provider said
	// not before then): the session stops retrying instead.
	Budget time.Duration
}

// DefaultRetry: three retries, 0.5 s doubling to 8 s, with jitter; five
// minutes of waiting in all.
var DefaultRetry = Retry{Max: 3, Base: 500 * time.Millisecond, MaxDelay: 8 * time.Second, Budget: 5 * time.Minute}

// Delay is how long to wait before retry n (0-based): Retry-After as the
// provider sent it, else exponential backoff with full jitter.
func (r Retry) Delay(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	d := r.Base << n
	if d > r.MaxDelay || d <= 0 {
		d = r.MaxDelay
	}
	return d/2 + rand.N(d/2+1)
}

// Sleep waits d, or returns ctx's error if it ends first.
func Sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// ErrorClass says what an HTTP error means for the caller.
type ErrorClass string

// Error classes, as the providers document them.
const (
	ClassRequest   ErrorClass = "request"   // 400/413/422: fix the request, no retry
	ClassConfig    ErrorClass = "config"    // 401/402/403: key, billing or permission
	ClassNotFound  ErrorClass = "not_found" // 404: model or path
	ClassRetryable ErrorClass = "retryable" // 408/409/429/5xx/529
)

// Classify maps an HTTP status to its class.
func Classify(status int) ErrorClass {
	switch {
	case status == 401 || status == 402 || status == 403:
		return ClassConfig
	case status == 404:
		return ClassNotFound
	case status == 408 || status == 409 || status == 429 || status >= 500:
		return ClassRetryable
	}
	return ClassRequest
}

// ShouldRetry decides whether an HTTP error is sent again, as the official
// SDKs decide: the server's x-should-retry (true or false) first, else the
// status's class. modelwire serve --session says false on the 409 for a
// request its recording never saw: asking again gets the same mismatch
// (issue 27).
func ShouldRetry(status int, h http.Header) bool {
	switch h.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	return Classify(status) == ClassRetryable
}

// NewHTTPClient builds the one client a session reuses: a connect limit on
// dialing, no Client.Timeout (it would cut streams; the other limits run
// on the request's context).
func NewHTTPClient(t Timeouts) *http.Client {
	dialer := &net.Dialer{Timeout: t.Connect, KeepAlive: 30 * time.Second}
	tr := &http.Transport{
		Proxy:                 http.ProxyFromEnvironment,
		DialContext:           dialer.DialContext,
		TLSHandshakeTimeout:   t.Connect,
		MaxIdleConnsPerHost:   4,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
		ForceAttemptHTTP2:     true,
	}
	return &http.Client{Transport: tr}
}

// isConnectError reports a failure to connect (dial or TLS), which is the
// connect limit when it timed out.
func isConnectError(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

// Watchdog cancels an attempt when the first-event, idle or total limit
// fires, with a TimeoutError as the cause.
type Watchdog struct {
	cancel    context.CancelCauseFunc
	stopTotal context.CancelFunc
	timer     *time.Timer
	idle      bool // timer is the idle timer (else the first-event one)
	t         Timeouts
}

// NewWatchdog starts the limits t on an attempt's context, derived from
// parent; Stop ends it.
func NewWatchdog(parent context.Context, t Timeouts) (context.Context, *Watchdog) {
	ctx, cancel := context.WithCancelCause(parent)
	w := &Watchdog{cancel: cancel, t: t, stopTotal: func() {}}
	if t.Total > 0 {
		ctx, w.stopTotal = context.WithTimeoutCause(ctx, t.Total, &TimeoutError{Limit: "total", After: t.Total})
	}
	if t.FirstEvent > 0 {
		w.timer = time.AfterFunc(t.FirstEvent, func() { cancel(&TimeoutError{Limit: "first-event", After: t.FirstEvent}) })
	}
	return ctx, w
}

// Event notes that an event arrived: the first-event limit is met and the
// idle limit starts again.
func (w *Watchdog) Event() {
	if w.timer != nil {
		w.timer.Stop()
	}
	if w.t.Idle <= 0 {
		return
	}
	if w.timer == nil || !w.idle {
		w.idle = true
		w.timer = time.AfterFunc(w.t.Idle, func() { w.cancel(&TimeoutError{Limit: "idle", After: w.t.Idle}) })
		return
	}
	w.timer.Reset(w.t.Idle)
}

// Hold stops the first-event and idle limits while a person reads a
// paused step; the next Event starts the idle limit again.
func (w *Watchdog) Hold() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

// Stop ends the limits and the attempt's context.
func (w *Watchdog) Stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.stopTotal()
	w.cancel(nil)
}

// Describe names a transport failure: a timeout by its limit, a
// connection failure, or the error itself. ctx is the attempt's (its
// cause names the limit that fired).
func Describe(ctx context.Context, err error) string {
	var te *TimeoutError
	if cause := context.Cause(ctx); errors.As(cause, &te) {
		return te.Error()
	}
	if errors.As(err, &te) {
		return te.Error()
	}
	if isConnectError(err) {
		var ne interface{ Timeout() bool }
		if errors.As(err, &ne) && ne.Timeout() {
			return "connect timeout: " + err.Error()
		}
		return "cannot connect: " + err.Error()
	}
	if errors.Is(err, context.Canceled) {
		return "cancelled"
	}
	return err.Error()
}
