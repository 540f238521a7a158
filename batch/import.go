package batch

import (
	"errors"
	"fmt"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/redact"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
)

// Import reads a batch's files (see readFiles) and records one session per
// custom_id, in the input's order, each a turn of one non-streamed attempt:
// the line's request and the result paired with it by custom_id, wherever
// it sits in the output or error file. A request-level error (an HTTP
// error in the error file, or an error with no response) is that session
// failed, not the batch; a request with no result line at all is failed
// with "no result". Each is titled with the batch's id and status
// (store.BatchTitle) so a list groups them. Everything is checked before
// anything is written; an import that fails part way deletes what it wrote.
func Import(db *store.DB, files []File) (store.ImportResult, error) {
	var res store.ImportResult
	if db.ReadOnly() {
		return res, errors.New("store: the database is open read-only")
	}
	p, err := readFiles(files)
	if err != nil {
		return res, err
	}
	created := time.Now()
	if p.created > 0 {
		created = time.Unix(p.created, 0)
	}
	for _, r := range p.requests {
		id, err := p.record(db, r, created)
		if err != nil {
			for _, done := range res.Sessions {
				_ = db.DeleteSession(done)
			}
			return store.ImportResult{}, fmt.Errorf("custom_id %q: %w", r.customID, err)
		}
		res.Sessions = append(res.Sessions, id)
	}
	// The sessions were recorded as copies (SessionMeta.Copy): committed
	// here, so that whoever asked for the import reads them whole.
	return res, db.Flush()
}

// record stores one request and its result as a session.
func (p *parsed) record(db *store.DB, r request, created time.Time) (string, error) {
	d := r.desc
	meta := store.SessionMeta{Copy: true, Title: store.BatchTitle(p.group, p.status, r.customID), Protocol: d.Name, Provider: d.Provider,
		Model: r.model, BaseURL: d.Endpoint.BaseURL, Source: store.SourceBatch, CreatedAt: created,
		Manifest: store.Manifest{AdapterVersion: adapters.Version}}
	j := timeline.NewStoreJournal(db, meta, false)
	id, err := j.Start()
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		_ = j.Interrupt()
		_ = db.DeleteSession(id)
		return "", err
	}
	proto := d.New()
	// A batch line carries no key, but a body may hold a secret-named
	// member: redacted as every stored body is.
	am := store.AttemptMeta{Protocol: d.Name, Method: "POST", URL: d.Endpoint.Host + r.url, Body: redact.JSONMembers(r.body)}
	res, ok := p.results[r.customID]
	var layers []session.LayerResult
	switch {
	case !ok || res.status == 0:
		why := "no result: neither the output nor the error file has a line for this custom_id (the batch did not run it)"
		if ok {
			why = fmt.Sprintf("the batch could not run it: %s %s", res.code, res.msg)
		}
		u := session.Update{Kind: session.UpAttempt, Turn: 1, Attempt: 1, URL: am.URL, Err: why}
		if err := j.RecordAttempt(u, am); err != nil {
			return fail(err)
		}
		layers = verdict(session.Fail, why, session.Skip, "")
	default:
		layers, err = recordResponse(j, proto, am, res, created)
		if err != nil {
			return fail(err)
		}
	}
	status := store.StatusFailed
	if layers == nil {
		// What the files can judge passed: the request got its answer,
		// whole. How the application reads it, they do not say.
		status = store.StatusDone
		layers = verdict(session.Pass, fmt.Sprintf("HTTP %d", res.status), session.Pass, "")
	}
	// The session's verdict (turn 0), as a run's final validation: with
	// one turn it is that turn's, and a verdict on a turn would read, in a
	// replay, as a run's that earned a regeneration.
	if err := j.RecordVerdict(0, layers); err != nil {
		return fail(err)
	}
	return id, j.FinishAt(status, created)
}

// recordResponse records a result that has an HTTP response: its body
// decoded with the protocol's adapter (an HTTP error as the API error it
// carries). It returns the verdict when the request failed, nil when not.
func recordResponse(j *timeline.StoreJournal, proto adapters.Protocol, am store.AttemptMeta, res result, at time.Time) ([]session.LayerResult, error) {
	u := session.Update{Kind: session.UpAttempt, Turn: 1, Attempt: 1, URL: am.URL, HTTPStatus: res.status}
	if err := j.ImportAttempt(u, am, timeline.AttemptTimes{Started: at}); err != nil {
		return nil, err
	}
	res.body = redact.JSONMembers(res.body)
	st := adapters.NewStream(proto)
	failed := res.status >= 400
	var evs []adapters.Event
	if failed {
		apiErr := proto.DecodeError(res.status, nil, res.body)
		evs = st.Reducer().Apply([]adapters.Event{{Type: adapters.EvTerminal, Status: adapters.StatusFailed,
			StopReason: adapters.StopError, Error: apiErr}})
	} else {
		evs = st.FeedBody(res.body)
	}
	step := adapters.Step{Index: 0, Raw: adapters.RawEvent{Data: string(res.body)}, Events: evs}
	if err := j.Record(session.Update{Kind: session.UpStep, Turn: 1, Attempt: 1, Step: &step}); err != nil {
		return nil, err
	}
	var layers []session.LayerResult
	term := st.Reducer().Terminal()
	transport := fmt.Sprintf("HTTP %d", res.status)
	switch {
	case failed:
		why := transport
		if term != nil && term.Error != nil {
			why = term.Error.Error() // it says the status too
		}
		layers = verdict(session.Fail, why, session.Skip, "")
	case term == nil || term.Status == adapters.StatusUnknown:
		layers = verdict(session.Pass, transport, session.Fail, "the response body has no end: it is not a whole response")
	case term.Status == adapters.StatusFailed:
		why := "the response ended failed"
		if term.Error != nil {
			why += ": " + term.Error.Error()
		}
		layers = verdict(session.Pass, transport, session.Fail, why)
	}
	end := session.Update{Kind: session.UpResponse, Turn: 1, Attempt: 1}
	if layers != nil {
		end.Err = layers[0].Detail
		if layers[1].Status == session.Fail {
			end.Err = layers[1].Detail
		}
	}
	return layers, j.Record(end)
}

// verdict is the five layers of an imported request: transport and
// protocol judged, the rest skipped (the files do not say how the
// application reads the answer).
func verdict(transport session.Verdict, tdetail string, protocol session.Verdict, pdetail string) []session.LayerResult {
	return []session.LayerResult{{Layer: session.LayerTransport, Status: transport, Detail: tdetail}, {Layer: session.LayerProtocol, Status: protocol, Detail: pdetail},
		{Layer: session.LayerParse, Status: session.Skip}, {Layer: session.LayerSchema, Status: session.Skip}, {Layer: session.LayerDomain, Status: session.Skip}}
}
