package sim

import (
	"fmt"
	"maps"
	"net/http"
	"strconv"
	"strings"

	"github.com/modelwire/modelwire/adapters"
)

// The responses a server keeps so a later request can continue them
// (previous_response_id, previous_interaction_id), bounded by count and
// bytes, and the call ids it issued.

// continueChain is the model turn a request is at: the turns its history
// carries plus, for previous_response_id, those of the stored chain, whose
// calls and results the model then sees as if resent. An unknown or
// unstored previous id, or a result that answers no call of the chain,
// gets the provider's error.
func (s *Server) continueChain(in *adapters.Inbound, simp adapters.Simulated) (int, *adapters.SimError) {
	if in.PreviousResponseID == "" {
		return in.ModelTurns, nil
	}
	chain, checksChain := simp.(chainChecker)
	s.mu.Lock()
	prev, ok := s.responses[in.PreviousResponseID]
	s.mu.Unlock()
	if !ok || !prev.stored {
		if checksChain {
			return 0, chain.UnknownPrevious(in.PreviousResponseID)
		}
		return 0, simp.ErrorResponse(http.StatusBadRequest, "invalid_request_error", fmt.Sprintf("%s not found.", in.PreviousResponseID))
	}
	if checksChain {
		for _, r := range in.Results {
			if _, ok := prev.calls[r.CallID]; !ok {
				return 0, chain.UnmatchedResult(r.CallID)
			}
		}
	}
	for i, r := range in.Results {
		if r.Name == "" {
			in.Results[i].Name = prev.calls[r.CallID]
		}
	}
	in.Results = append(append([]adapters.ToolResult(nil), prev.results...), in.Results...)
	in.Prompt = append(append([]adapters.PromptPart(nil), prev.prompt...), in.Prompt...)
	return in.ModelTurns + prev.depth, nil
}

// continuable: a later request of the protocol can continue a response
// by its id (its ChainField: Responses' previous_response_id,
// Interactions' previous_interaction_id), so the server keeps its
// responses. The others never name one, and keeping every response they
// got (a map entry each, for the life of the server) only grew the heap
// the GC walks.
func continuable(d adapters.Descriptor) bool { return d.ChainField != "" }

// uniqueCallIDs keeps every call id this server issues unique, as a real
// provider's are: the first conversation gets the ids the model chose (the
// refund case's are the chapter's, call_order…), a later one that would
// repeat them gets a numbered suffix. The proxy tells conversations apart
// by the call ids their requests quote.
func (s *Server) uniqueCallIDs(mt *adapters.ModelTurn) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i, it := range mt.Items {
		if it.Kind != adapters.KindToolCall || it.CallID == "" {
			continue
		}
		id, suffix := it.CallID, ""
		n := max(s.suffixed[it.CallID], 2)
		for ; s.issued[id]; n++ {
			suffix = "_" + strconv.Itoa(n)
			id = it.CallID + suffix
		}
		if suffix != "" {
			s.suffixed[it.CallID] = n
		}
		s.issued[id] = true
		mt.Items[i].CallID = id
		if it.ID != "" {
			mt.Items[i].ID = it.ID + suffix
		}
	}
}

// remember keeps a response the client may continue with
// previous_response_id: its depth, the results its chain carried and the
// calls it issued, by call_id.
func (s *Server) remember(id string, simp adapters.Simulated, mt *adapters.ModelTurn, o adapters.ResponseOptions, turn int, in *adapters.Inbound) {
	if a, ok := simp.(interface {
		AssignCallIDs(adapters.ModelTurn, adapters.ResponseOptions) adapters.ModelTurn
	}); ok {
		*mt = a.AssignCallIDs(*mt, o)
	}
	calls := map[string]string{}
	s.mu.Lock()
	defer s.mu.Unlock()
	if prev, ok := s.responses[in.PreviousResponseID]; ok {
		maps.Copy(calls, prev.calls)
	}
	for _, it := range mt.Items {
		if it.Kind == adapters.KindToolCall {
			calls[it.CallID] = it.Name
		}
	}
	// The results' text is cut from the request body; a copy keeps the
	// stored chain from holding every body it came in.
	results := make([]adapters.ToolResult, len(in.Results))
	for i, r := range in.Results {
		results[i] = r
		results[i].Content = strings.Clone(r.Content)
	}
	var prompt []adapters.PromptPart
	for _, p := range in.Prompt {
		if !p.Once {
			prompt = append(prompt, adapters.PromptPart{Role: p.Role, Text: strings.Clone(p.Text)})
		}
	}
	r := storedResponse{depth: turn + 1, stored: in.Store == nil || *in.Store, results: results, calls: calls, prompt: prompt}
	r.size = sizeOf(r)
	s.keep(id, r)
}

// keep stores a response under both bounds (KeepResponses, KeepBytes):
// the oldest give way until the new one fits.
func (s *Server) keep(id string, r storedResponse) {
	keepN, keepB := s.opts.KeepResponses, s.opts.KeepBytes
	if keepN <= 0 {
		keepN = DefaultKeepResponses
	}
	if keepB <= 0 {
		keepB = DefaultKeepBytes
	}
	if old, ok := s.responses[id]; ok { // the same id again: replaced in place
		s.keptBytes -= old.size
		if r.size > keepB {
			r = storedResponse{depth: r.depth, stored: r.stored, size: 256}
		}
		s.responses[id] = r
		s.keptBytes += r.size
	} else {
		if r.size > keepB {
			return // larger than the whole bound: not kept
		}
		s.kept = append(s.kept, id)
		s.responses[id] = r
		s.keptBytes += r.size
	}
	for len(s.kept)-s.oldest > keepN || (s.keptBytes > keepB && len(s.kept)-s.oldest > 1) {
		gone := s.kept[s.oldest]
		s.kept[s.oldest] = ""
		s.oldest++
		s.keptBytes -= s.responses[gone].size
		delete(s.responses, gone)
	}
	if s.oldest > 1024 && s.oldest > len(s.kept)/2 { // compact the queue
		s.kept = append(s.kept[:0:0], s.kept[s.oldest:]...)
		s.oldest = 0
	}
}
