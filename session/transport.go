package session

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/modelwire/modelwire/adapters"
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

// delay is how long to wait before retry n (0-based): Retry-After as the
// provider sent it, else exponential backoff with full jitter.
func (r Retry) delay(n int, retryAfter time.Duration) time.Duration {
	if retryAfter > 0 {
		return retryAfter
	}
	d := r.Base << n
	if d > r.MaxDelay || d <= 0 {
		d = r.MaxDelay
	}
	return d/2 + rand.N(d/2+1)
}

// sleepCtx waits d, or returns ctx's error if it ends first.
func sleepCtx(ctx context.Context, d time.Duration) error {
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

// shouldRetry decides whether an HTTP error is sent again, as the official
// SDKs decide: the server's x-should-retry (true or false) first, else the
// status's class. modelwire serve --session says false on the 409 for a
// request its recording never saw: asking again gets the same mismatch
// (issue 27).
func shouldRetry(status int, h http.Header) bool {
	switch h.Get("x-should-retry") {
	case "true":
		return true
	case "false":
		return false
	}
	return Classify(status) == ClassRetryable
}

// Provider holds what a real provider needs: where it is and its key.
type Provider struct {
	Name    string
	BaseURL string
	Key     string
}

// defaultBaseURL is each provider's base URL as its official SDK means it.
var defaultBaseURL = map[string]string{
	adapters.ProviderOpenAI:    "https://api.openai.com/v1",
	adapters.ProviderAnthropic: "https://api.anthropic.com",
	adapters.ProviderDeepSeek:  "https://api.deepseek.com",
	adapters.ProviderGemini:    "https://generativelanguage.googleapis.com",
}

var keyEnv = map[string]string{
	adapters.ProviderOpenAI:     "OPENAI_API_KEY",
	adapters.ProviderAnthropic:  "ANTHROPIC_API_KEY",
	adapters.ProviderDeepSeek:   "DEEPSEEK_API_KEY",
	adapters.ProviderGemini:     "GEMINI_API_KEY",
	adapters.ProviderCompatible: "COMPATIBLE_API_KEY",
}

// KeyEnv is the environment variable a provider's key is read from.
func KeyEnv(provider string) string { return keyEnv[provider] }

// ResolveProvider fills a provider from flags and the environment: the
// base URL from the flag, else <PROVIDER>_BASE_URL, else the default; the
// key from <PROVIDER>_API_KEY.
func ResolveProvider(name, baseURL string, getenv func(string) string) (Provider, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	p := Provider{Name: name, BaseURL: baseURL}
	if name == adapters.ProviderSim {
		if p.BaseURL == "" {
			return p, errors.New("the simulator's base URL is not set")
		}
		p.Key = "sim-key"
		return p, nil
	}
	env, ok := keyEnv[name]
	if !ok {
		return p, fmt.Errorf("unknown provider %q (want sim, openai, anthropic, deepseek, gemini or compatible)", name)
	}
	if p.BaseURL == "" {
		p.BaseURL = getenv(strings.ToUpper(name) + "_BASE_URL")
	}
	if p.BaseURL == "" {
		p.BaseURL = defaultBaseURL[name]
	}
	if p.BaseURL == "" {
		return p, fmt.Errorf("provider compatible needs a base URL: --base-url or COMPATIBLE_BASE_URL (e.g. http://127.0.0.1:11434/v1)")
	}
	if _, err := url.Parse(p.BaseURL); err != nil {
		return p, fmt.Errorf("bad base URL %q: %v", p.BaseURL, err)
	}
	p.Key = getenv(env)
	if p.Key == "" && name != adapters.ProviderCompatible {
		return p, fmt.Errorf("provider %s needs %s in the environment", name, env)
	}
	return p, nil
}

// URL joins the base URL and an encoded request's path. A base URL that
// already ends in /v1 (OpenAI's convention) absorbs the path's /v1.
func (p Provider) URL(path string) string {
	base := strings.TrimRight(p.BaseURL, "/")
	if strings.HasSuffix(base, "/v1") && strings.HasPrefix(path, "/v1/") {
		path = strings.TrimPrefix(path, "/v1")
	}
	return base + path
}

// Authorize adds the key in the header the protocol uses.
func (p Provider) Authorize(h http.Header, protocol string) {
	if p.Key == "" {
		return
	}
	switch protocol {
	case adapters.AnthropicMessages:
		h.Set("x-api-key", p.Key)
	case adapters.Gemini, adapters.GeminiInteractions:
		h.Set("x-goog-api-key", p.Key)
	default:
		h.Set("Authorization", "Bearer "+p.Key)
	}
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

// watchdog cancels an attempt when the first-event, idle or total limit
// fires, with a TimeoutError as the cause.
type watchdog struct {
	cancel    context.CancelCauseFunc
	stopTotal context.CancelFunc
	timer     *time.Timer
	idle      bool // timer is the idle timer (else the first-event one)
	t         Timeouts
}

func newWatchdog(parent context.Context, t Timeouts) (context.Context, *watchdog) {
	ctx, cancel := context.WithCancelCause(parent)
	w := &watchdog{cancel: cancel, t: t, stopTotal: func() {}}
	if t.Total > 0 {
		ctx, w.stopTotal = context.WithTimeoutCause(ctx, t.Total, &TimeoutError{Limit: "total", After: t.Total})
	}
	if t.FirstEvent > 0 {
		w.timer = time.AfterFunc(t.FirstEvent, func() { cancel(&TimeoutError{Limit: "first-event", After: t.FirstEvent}) })
	}
	return ctx, w
}

// event notes that an event arrived: the first-event limit is met and the
// idle limit starts again.
func (w *watchdog) event() {
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

// hold stops the first-event and idle limits while a person reads a
// paused step; the next event() starts the idle limit again.
func (w *watchdog) hold() {
	if w.timer != nil {
		w.timer.Stop()
	}
}

func (w *watchdog) stop() {
	if w.timer != nil {
		w.timer.Stop()
	}
	w.stopTotal()
	w.cancel(nil)
}
