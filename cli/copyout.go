package cli

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/copyout"
	"github.com/modelwire/modelwire/store"
)

// isSnippet reports whether an export format is a copy-out snippet.
func isSnippet(format string) bool { return slices.Contains(copyout.Formats, format) }

// exportSnippets writes the requests of a session (each turn's last
// attempt, or only turn) as format: curl, python, ts or http.
func exportSnippets(w io.Writer, db *store.DB, id, format string, turn int) error {
	s, err := db.GetSession(id)
	if err != nil {
		return storeErr(err)
	}
	last := map[int]store.Attempt{}
	var turns []int
	for _, a := range s.Attempts {
		if _, ok := last[a.Turn]; !ok {
			turns = append(turns, a.Turn)
		}
		last[a.Turn] = a
	}
	if turn != 0 {
		if _, ok := last[turn]; !ok {
			return usageErr("--turn %d: session %s has turns 1 to %d", turn, id, len(turns))
		}
		turns = []int{turn}
	}
	comment := map[string]string{"curl": "#", "python": "#", "ts": "//", "http": "###"}[format]
	for i, t := range turns {
		a := last[t]
		r := copyout.Request{Method: a.Method, URL: a.URL, Headers: map[string]string{}, Body: a.RequestBody, Protocol: a.Protocol, Provider: s.Provider}
		for k, vs := range a.RequestHeader {
			if len(vs) > 0 {
				r.Headers[k] = vs[0]
			}
		}
		if s.Provider == adapters.ProviderSim {
			// The run's simulator is gone; modelwire serve answers there.
			if u, err := url.Parse(a.URL); err == nil {
				u.Scheme, u.Host = "http", "127.0.0.1:8787"
				r.URL = u.String()
			}
		}
		out, err := copyout.Write(format, r)
		if err != nil {
			return usageErr("%v", err)
		}
		if i > 0 {
			fmt.Fprintln(w)
		}
		if len(turns) > 1 || format == "http" {
			fmt.Fprintf(w, "%s session %s, turn %d (%s)\n", comment, s.ID, t, a.Protocol)
		}
		fmt.Fprintln(w, strings.TrimRight(out, "\n"))
	}
	return nil
}
