package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/modelwire/modelwire/proxy"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/ui"
	"github.com/modelwire/modelwire/vcr"
)

// `proxy --rules FILE`: the rules are loaded before the proxy listens (a
// bad file is a usage error naming its line and pointer), reloaded when
// the file changes, and given what their actions need — the database's
// stored sessions for replace, someone to ask for hold.

// rulesPoll is how often the rules file's modification time is checked.
const rulesPoll = time.Second

func wireRules(ctx context.Context, app *App, f proxyFlags, db *store.DB, log *slog.Logger, rec *ui.Recording, opts *proxy.Options) error {
	if f.rules == "" {
		return nil
	}
	rs, err := proxy.LoadRules(f.rules)
	if err != nil {
		return usageErr("--rules: %v", err)
	}
	set := proxy.NewRuleSet(rs)
	opts.Rules = set
	go proxy.WatchRules(ctx, f.rules, set, rulesPoll, log)
	var mu sync.Mutex // recordings are loaded once each
	tapes := map[string]http.Handler{}
	opts.Replay = func(id string) (http.Handler, error) {
		mu.Lock()
		defer mu.Unlock()
		h := tapes[id]
		if h == nil {
			c, err := loadCassette(db, id)
			if err != nil {
				return nil, err
			}
			h = vcr.Handler(c, false)
			tapes[id] = h
		}
		return h, nil
	}
	if td, ok := opts.Hold.(*terminalDecider); ok {
		opts.HoldRequest = func(ctx context.Context, h proxy.HeldRequest) ([]byte, error) { return askRequest(ctx, td, h) }
	}
	if !hasHold(rs) || opts.Hold != nil {
		return nil
	}
	// A hold rule without --hold-tools: ask as --hold-tools would, for the
	// rules' matches only.
	switch {
	case rec != nil:
		opts.Hold = rec
	case isTerminal(app.In):
		td := &terminalDecider{in: app.In, out: app.Err, scenario: &session.Scenario{}, lineEdit: true}
		opts.Hold = td
		opts.HoldRequest = func(ctx context.Context, h proxy.HeldRequest) ([]byte, error) { return askRequest(ctx, td, h) }
	default:
		log.Warn("the rules hold exchanges, but there is no terminal to ask: they pass unheld")
	}
	opts.HoldByRuleOnly = true
	return nil
}

func hasHold(rs *proxy.Rules) bool {
	for _, r := range rs.List {
		if r.Hold {
			return true
		}
	}
	return false
}

// askRequest shows a held request and takes it as it is or edited
// ($EDITOR, or one line of JSON). An edit that is not JSON is asked again.
func askRequest(ctx context.Context, d *terminalDecider, h proxy.HeldRequest) ([]byte, error) {
	var pretty bytes.Buffer
	if json.Indent(&pretty, h.Body, "  ", "  ") != nil {
		pretty.Reset()
		pretty.Write(h.Body)
	}
	fmt.Fprintf(d.out, "\nheld request, turn %d: %s %s\n  %s\n", h.Turn, h.Protocol, h.Path, pretty.String())
	for {
		fmt.Fprint(d.out, "[s]end as it is, [e]dit? ")
		ans, err := d.readLine()
		if err != nil {
			return nil, fmt.Errorf("no answer on the terminal: %v", err)
		}
		switch ans {
		case "s", "send", "":
			return h.Body, nil
		case "e", "edit":
			b, err := d.edit(ctx, pretty.Bytes())
			if err != nil {
				fmt.Fprintf(d.out, "  ! %v\n", err)
				continue
			}
			var compact bytes.Buffer
			if err := json.Compact(&compact, b); err != nil {
				fmt.Fprintf(d.out, "  ! the edited request is not valid JSON: %v\n", err)
				continue
			}
			return compact.Bytes(), nil
		}
	}
}
