package har

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/modelwire/modelwire/adapters"
	"github.com/modelwire/modelwire/session"
	"github.com/modelwire/modelwire/store"
	"github.com/modelwire/modelwire/timeline"
)

// Import imports a HAR file: read reads it into conversations (the file
// format) and each conversation is recorded as one session through the
// journal every session records through, each exchange converted into
// stored events the way the proxy's are. lookup finds a protocol's adapter
// (registry.Lookup). The whole file is checked before anything is
// written; an import that fails part way deletes the sessions it wrote.
func Import(db *store.DB, r io.Reader, name string, lookup func(protocol string) (adapters.Protocol, error)) (store.ImportResult, error) {
	if db.ReadOnly() {
		return store.ImportResult{}, errors.New("store: the database is open read-only")
	}
	convs, res, err := read(r, name)
	if err != nil {
		return res, err
	}
	for _, c := range convs {
		for _, x := range c.Exchanges {
			if _, err := lookup(x.Request.Protocol); err != nil {
				return store.ImportResult{}, fmt.Errorf("cannot decode %s: %w", x.Request.Protocol, err)
			}
		}
	}
	for _, c := range convs {
		id, err := importHARConversation(db, c, lookup)
		if err != nil {
			for _, done := range res.Sessions {
				_ = db.DeleteSession(done)
			}
			return store.ImportResult{}, fmt.Errorf("%s: %w", name, err)
		}
		res.Sessions = append(res.Sessions, id)
	}
	// The sessions were recorded as copies (SessionMeta.Copy): committed
	// here, so that whoever asked for the import reads them whole.
	return res, db.Flush()
}

// importHARConversation records one conversation as one session; it is
// failed when the last attempt of any turn failed, unless a modelwire
// export says how it ended.
func importHARConversation(db *store.DB, c conversation, lookup func(string) (adapters.Protocol, error)) (string, error) {
	j := timeline.NewStoreJournal(db, c.Meta, false)
	id, err := j.Start()
	if err != nil {
		return "", err
	}
	fail := func(err error) (string, error) {
		_ = j.Interrupt()
		_ = db.DeleteSession(id)
		return "", err
	}
	failedTurns := map[int]bool{}
	verdicts := map[int][]session.LayerResult{}
	var end time.Time
	for i := range c.Exchanges {
		x := &c.Exchanges[i]
		layers, err := importHARExchange(j, x, lookup)
		if err != nil {
			return fail(fmt.Errorf("log.entries[%d]: %w", x.Entry, err))
		}
		failedTurns[x.Turn] = layers != nil
		verdicts[x.Turn] = layers
		if done := x.Started.Add(x.End); done.After(end) {
			end = done
		}
		if err := x.restoreEntries(j); err != nil {
			return fail(fmt.Errorf("log.entries[%d]._modelwire.entries: %w", x.Entry, err))
		}
	}
	status := c.Status
	if status == "" {
		// A foreign HAR: each turn whose last attempt failed is judged
		// as the proxy judges an exchange (which layer, and why), so the
		// session lists as failed at that layer.
		status = store.StatusDone
		for turn, failed := range failedTurns {
			if failed {
				status = store.StatusFailed
				if err := j.RecordVerdict(turn, verdicts[turn]); err != nil {
					return fail(err)
				}
			}
		}
	}
	return id, j.FinishAt(status, end)
}

// importHARExchange records one exchange as an attempt: its response body
// decoded with the protocol's adapter (an HTTP error as the API error it
// carries, a stream event by event, a whole body as one step), every
// event placed at the first byte. When the attempt failed it returns the
// verdict (nil when it did not): an HTTP error at the transport layer; a
// response that ended failed, or never ended (a stream cut before its
// terminal event), at the protocol layer.
func importHARExchange(j *timeline.StoreJournal, x *exchange, lookup func(string) (adapters.Protocol, error)) ([]session.LayerResult, error) {
	proto, err := lookup(x.Request.Protocol)
	if err != nil {
		return nil, err
	}
	u := session.Update{Kind: session.UpAttempt, Turn: x.Turn, Attempt: x.Attempt, URL: x.Request.URL, HTTPStatus: x.Status, Header: x.Header}
	times := timeline.AttemptTimes{Started: x.Started, Offset: x.Offset, Sent: x.Sent, Headers: x.FirstByte, End: x.End}
	if p := x.times; p != nil {
		times.FirstEvent, times.FirstToken, times.FirstText = duration(p.FirstEvent), duration(p.FirstToken), duration(p.FirstText)
		times.Terminal = duration(p.Terminal)
		if d := duration(p.Server); d > 0 && p.ServerSource != "" {
			times.Server, times.ServerSource = d, p.ServerSource
		}
	}
	if err := j.ImportAttempt(u, x.Request, times); err != nil {
		return nil, err
	}
	at := float64(x.FirstByte) / float64(time.Millisecond)
	step := func(s adapters.Step) error {
		return j.Record(session.Update{Kind: session.UpStep, Turn: x.Turn, Attempt: x.Attempt, Step: &s, OffsetMS: at})
	}
	st := adapters.NewStream(proto)
	failed := x.Status >= 400
	switch {
	case failed:
		apiErr := proto.DecodeError(x.Status, x.Header, x.Body)
		evs := st.Reducer().Apply([]adapters.Event{{Type: adapters.EvTerminal, Status: adapters.StatusFailed,
			StopReason: adapters.StopError, Error: apiErr}})
		err = step(adapters.Step{Index: 0, Raw: adapters.RawEvent{Data: string(x.Body)}, Events: evs})
	case x.MimeType == "text/event-stream" || proto.Framing() == adapters.FramingNDJSON || (len(x.Body) > 0 && adapters.LooksLikeStream(x.Body)):
		err = adapters.ReadStream(proto, st, bytes.NewReader(x.Body), step)
	default:
		err = step(adapters.Step{Index: 0, Raw: adapters.RawEvent{Data: string(x.Body)}, Events: st.FeedBody(x.Body)})
	}
	if err != nil {
		return nil, err
	}
	var layers []session.LayerResult
	term := st.Reducer().Terminal()
	switch {
	case failed:
		layers = importVerdict(session.Fail, fmt.Sprintf("HTTP %d", x.Status), session.Skip, "")
	case term == nil || term.Status == adapters.StatusUnknown:
		layers = importVerdict(session.Pass, fmt.Sprintf("HTTP %d", x.Status), session.Fail, "no terminal event: the response was cut before it ended")
	case term.Status == adapters.StatusFailed:
		why := "the response ended failed"
		if term.Error != nil {
			why += ": " + term.Error.Error()
		}
		layers = importVerdict(session.Pass, fmt.Sprintf("HTTP %d", x.Status), session.Fail, why)
	}
	u = session.Update{Kind: session.UpResponse, Turn: x.Turn, Attempt: x.Attempt}
	if layers != nil && layers[1].Status == session.Fail {
		u.Err = layers[1].Detail
	}
	if err := j.Record(u); err != nil {
		return nil, err
	}
	return layers, nil
}

// importVerdict is the five layers of an imported exchange: transport and
// protocol judged, the rest skipped (the file does not say how the
// application reads the answer).
func importVerdict(transport session.Verdict, tdetail string, protocol session.Verdict, pdetail string) []session.LayerResult {
	return []session.LayerResult{{Layer: session.LayerTransport, Status: transport, Detail: tdetail}, {Layer: session.LayerProtocol, Status: protocol, Detail: pdetail},
		{Layer: session.LayerParse, Status: session.Skip}, {Layer: session.LayerSchema, Status: session.Skip}, {Layer: session.LayerDomain, Status: session.Skip}}
}

// restoreEntries writes back the session-level entries (decisions, tool
// results, verdicts) a modelwire export carries after this exchange, as
// they were stored: like a JSONL import, it restores rows rather than
// converting an exchange.
func (x *exchange) restoreEntries(j *timeline.StoreJournal) error {
	for _, se := range x.entries {
		// Stored compact, as the live writer stores it (the HAR is
		// indented).
		var compact bytes.Buffer
		if err := json.Compact(&compact, se.Entry); err != nil {
			return err
		}
		if err := j.RestoreEntry(time.Duration(se.OffsetUS)*time.Microsecond, compact.Bytes()); err != nil {
			return err
		}
	}
	return nil
}
