package session

import (
	"bytes"
	"net/url"

	"github.com/modelwire/modelwire/adapters"

	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/transport"
)

// sealFor collects the secrets a session's requests carry, so that no
// update, error or result quotes them: the provider's key, and its base
// URL's userinfo and secret query parameters (package redact holds the
// rules).
func sealFor(p transport.Provider) *redact.Known {
	var urls []*url.URL
	if u, err := url.Parse(p.BaseURL); err == nil && p.BaseURL != "" {
		urls = append(urls, u)
	}
	k := redact.Collect(nil, urls...)
	k.Add(p.Key)
	return k
}

// SealUpdate removes secrets from everything an update carries, in place
// (what it points to is copied, never changed): URLs, headers, error
// texts, the request shown, validation details and messages by the rules
// of package redact and of the known values k; a step's raw event and
// events, a summary, a response body, tool calls, decisions, tool
// results and the output of the known values (a provider that echoes a
// key). Every front end that records or shows updates
// (the session engine, the proxy) calls it on each one before it leaves.
func SealUpdate(u *Update, k *redact.Known) {
	u.URL, u.Err, u.Message = k.All(u.URL), k.All(u.Err), k.All(u.Message)
	if u.Header != nil {
		u.Header = k.Header(u.Header)
	}
	if u.APIError != nil {
		e := *u.APIError
		e.Message = k.All(e.Message)
		u.APIError = &e
	}
	if r := u.Request; r != nil {
		c := *r
		c.Path = k.All(c.Path)
		if c.Headers != nil {
			hs := make(map[string]string, len(c.Headers))
			for name, v := range c.Headers {
				hs[name] = k.Text(redact.HeaderValue(name, v))
			}
			c.Headers = hs
		}
		c.Body = redact.JSONMembers(k.Bytes(c.Body))
		u.Request = &c
	}
	if len(u.Layers) > 0 {
		ls := append([]LayerResult{}, u.Layers...)
		for i := range ls {
			ls[i].Detail = k.All(ls[i].Detail)
		}
		u.Layers = ls
	}
	if u.Budget != nil && u.Budget.CountError != "" {
		b := *u.Budget
		b.CountError = k.All(b.CountError)
		u.Budget = &b
	}
	if k.Empty() {
		return
	}
	if len(u.ResponseBody) > 0 {
		u.ResponseBody = k.Bytes(u.ResponseBody)
	}
	if u.Step != nil {
		st := *u.Step
		SealStep(&st, k)
		u.Step = &st
	}
	if u.Summary != nil {
		s := *u.Summary
		SealSummary(&s, k)
		u.Summary = &s
	}
	// A model that repeats a key it saw puts it in a tool call, and a
	// tool that reads one returns it.
	if u.Proposal != nil {
		pr := *u.Proposal
		pr.Arguments = k.Bytes(pr.Arguments)
		u.Proposal = &pr
	}
	if u.Decision != nil {
		d := *u.Decision
		d.Arguments, d.Reason = k.Bytes(d.Arguments), k.Text(d.Reason)
		u.Decision = &d
	}
	if u.Result != nil {
		r := *u.Result
		r.Content = k.Text(r.Content)
		u.Result = &r
	}
	if len(u.Output) > 0 {
		u.Output = k.Bytes(u.Output)
	}
}

// SealStep removes known secrets from a step: its raw event and its
// events' text, arguments and errors. The events are copied before the
// first change, so a caller's slice is never written.
func SealStep(st *adapters.Step, k *redact.Known) {
	if k.Empty() {
		return
	}
	st.Raw.Data = k.Text(st.Raw.Data)
	copied := false
	for i := range st.Events {
		ev := st.Events[i]
		changed := false
		set := func(p *string) {
			if v := k.Text(*p); v != *p {
				*p, changed = v, true
			}
		}
		set(&ev.Delta)
		set(&ev.Detail)
		if ev.Final != nil {
			f := *ev.Final
			set(&f)
			ev.Final = &f
		}
		if len(ev.Arguments) > 0 {
			if b := k.Bytes(ev.Arguments); !bytes.Equal(b, ev.Arguments) {
				ev.Arguments, changed = b, true
			}
		}
		if ev.Error != nil {
			e := *ev.Error
			set(&e.Message)
			ev.Error = &e
		}
		if !changed {
			continue
		}
		if !copied {
			st.Events, copied = append([]adapters.Event(nil), st.Events...), true
		}
		st.Events[i] = ev
	}
}

// SealSummary removes known secrets from a summary's text, reasoning,
// refusal and error.
func SealSummary(sum *adapters.Summary, k *redact.Known) {
	if k.Empty() {
		return
	}
	sum.Text, sum.Reasoning = k.Text(sum.Text), k.Text(sum.Reasoning)
	if sum.Refusal != nil {
		r := k.Text(*sum.Refusal)
		sum.Refusal = &r
	}
	if sum.Error != nil {
		e := *sum.Error
		e.Message = k.Text(e.Message)
		sum.Error = &e
	}
}
