package cli

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"

	"github.com/modelwire/modelwire/adapters/registry"
	"github.com/modelwire/modelwire/capacity"
	"github.com/modelwire/modelwire/store"
)

// capacitySessions is how many of the latest stored sessions of a protocol
// and provider the bound's inputs come from.
const capacitySessions = 5

// storedCapacity works out the chapter's bound (13.7.2) for protocol on
// provider ("" for any) from the latest stored sessions: the newest
// rate-limit headers, read by the protocol's descriptor, and the mean
// tokens and seconds of their answered attempts, for a plan keeping
// concurrency requests in flight. perSession is the mean number of
// attempts a session made (0 when none is stored).
func storedCapacity(db *store.DB, protocol, provider string, concurrency int) (b capacity.Bound, perSession float64, err error) {
	d, ok := registry.Describe(protocol)
	if !ok {
		return b, 0, nil
	}
	list, err := db.ListSessions(store.Filter{Protocol: protocol, Provider: provider, Limit: capacitySessions})
	if err != nil {
		return b, 0, err
	}
	slices.Reverse(list) // oldest first: the newest limits are read last
	var samples []capacity.Sample
	for _, info := range list {
		s, err := db.GetSession(info.ID)
		if err != nil {
			return b, 0, err
		}
		for _, a := range s.Attempts {
			if a.StatusCode == 0 {
				continue
			}
			at := a.StartedAt
			if fb := a.Timings.FirstByte; fb != nil {
				at = at.Add(*fb)
			}
			smp := capacity.Sample{Limits: d.RateLimits.Read(a.ResponseHeader, at)}
			if u := a.Usage; u != nil && u.InputTokens != nil && u.OutputTokens != nil {
				smp.Tokens = *u.InputTokens + *u.OutputTokens
			}
			if end := a.Timings.Terminal; end != nil {
				smp.Seconds = end.Seconds()
			}
			samples = append(samples, smp)
		}
	}
	if len(list) > 0 {
		perSession = float64(len(samples)) / float64(len(list))
	}
	return capacity.Compute(capacity.FromSamples(samples, concurrency)), perSession, nil
}

// warnCapacity prints one line on w when sessions more sessions of
// protocol on provider, sent one after another, would exceed the bound
// the stored sessions give: what the plan needs, the bound and the term
// that binds. Nothing when the store has nothing to judge by.
func warnCapacity(w io.Writer, db *store.DB, protocol, provider string, sessions int) {
	if db == nil || sessions <= 1 {
		return
	}
	b, perSession, err := storedCapacity(db, protocol, provider, 1)
	if err != nil || perSession == 0 {
		return
	}
	if msg := b.Plan(int(math.Ceil(float64(sessions) * perSession))); msg != "" {
		fmt.Fprintf(w, "modelwire: %s (%d sessions of %s on %s, judged by the latest stored)\n", msg, sessions, protocol, cmp.Or(provider, "its providers"))
	}
}
