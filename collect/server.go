package collect

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"

	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	spb "google.golang.org/genproto/googleapis/rpc/status"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	_ "google.golang.org/grpc/encoding/gzip" // OTLP/gRPC exporters may compress with gzip
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
)

// TracesPath is where OTLP/HTTP sends traces.
const TracesPath = "/v1/traces"

const (
	ctProto = "application/x-protobuf"
	ctJSON  = "application/json"
)

// Handler is the OTLP/HTTP receiver (POST /v1/traces), as the OTLP
// specification answers: 200 with an ExportTraceServiceResponse (a
// partial success names the spans refused), 400 with a google.rpc.Status
// for a request that does not decode, 413, 415 and 405 for the rest, each
// body in the request's own encoding.
func (c *Collector) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc(TracesPath, c.serveTraces)
	return mux
}

func (c *Collector) serveTraces(w http.ResponseWriter, r *http.Request) {
	ct, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	asJSON := ct == ctJSON
	if r.Method != http.MethodPost {
		w.Header().Set("Allow", http.MethodPost)
		writeStatus(w, asJSON, http.StatusMethodNotAllowed, "OTLP traces are sent with POST")
		return
	}
	if ct != ctProto && ct != ctJSON {
		writeStatus(w, asJSON, http.StatusUnsupportedMediaType, fmt.Sprintf("content type %q: OTLP/HTTP is %s or %s", ct, ctProto, ctJSON))
		return
	}
	// At most maxDecoding requests are read and decoded at once (a decoded
	// JSON request takes a few times its size): memory is bounded by
	// --max-request, not by how many clients send at once.
	select {
	case c.decoding <- struct{}{}:
		defer func() { <-c.decoding }()
	case <-r.Context().Done():
		return
	}
	wire, err := readCapped(r.Body, c.o.MaxRequest)
	if err != nil {
		writeStatus(w, asJSON, http.StatusRequestEntityTooLarge, err.Error())
		return
	}
	enc := strings.ToLower(strings.TrimSpace(r.Header.Get("Content-Encoding")))
	body := wire
	switch enc {
	case "", "identity":
	case "gzip":
		zr, err := gzip.NewReader(bytes.NewReader(wire))
		if err != nil {
			writeStatus(w, asJSON, http.StatusBadRequest, "the gzip body does not decode: "+err.Error())
			return
		}
		if body, err = readCapped(zr, c.o.MaxRequest); err != nil {
			code := http.StatusBadRequest
			if errors.Is(err, errTooLarge) {
				code = http.StatusRequestEntityTooLarge
			}
			writeStatus(w, asJSON, code, "the gzip body: "+err.Error())
			return
		}
	default:
		writeStatus(w, asJSON, http.StatusUnsupportedMediaType, fmt.Sprintf("content encoding %q: gzip or none", enc))
		return
	}
	req, err := decode(body, asJSON)
	if err != nil {
		writeStatus(w, asJSON, http.StatusBadRequest, err.Error())
		return
	}
	if allInvalid(req) {
		writeStatus(w, asJSON, http.StatusBadRequest, errInvalidIDs)
		return
	}
	if c.fwd != nil {
		c.fwd.send(wire, ct, enc)
	}
	rejected, why := c.Export(req)
	resp := &coltracepb.ExportTraceServiceResponse{}
	if rejected > 0 {
		resp.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: rejected, ErrorMessage: why}
	}
	writeMessage(w, asJSON, http.StatusOK, resp)
}

var errTooLarge = errors.New("too large")

// maxDecoding bounds the requests read and decoded at once (per gRPC connection).
const maxDecoding = 4

const errInvalidIDs = "a span's trace_id must be 16 bytes and its span_id 8, not all zero"

// readCapped reads r whole, or fails once it passes max bytes.
func readCapped(r io.Reader, max int64) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, max+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > max {
		return nil, fmt.Errorf("the request is larger than %d bytes (--max-request): %w", max, errTooLarge)
	}
	return b, nil
}

// decode reads an ExportTraceServiceRequest in protobuf or OTLP's JSON.
func decode(body []byte, asJSON bool) (*coltracepb.ExportTraceServiceRequest, error) {
	req := &coltracepb.ExportTraceServiceRequest{}
	if !asJSON {
		if err := proto.Unmarshal(body, req); err != nil {
			return nil, fmt.Errorf("the protobuf body is not an ExportTraceServiceRequest: %v", err)
		}
		return req, nil
	}
	fixed, err := hexIDs(body)
	if err != nil {
		return nil, fmt.Errorf("the JSON body is not an ExportTraceServiceRequest: %v", err)
	}
	if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(fixed, req); err != nil {
		return nil, fmt.Errorf("the JSON body is not an ExportTraceServiceRequest: %v", err)
	}
	return req, nil
}

// hexIDs rewrites OTLP/JSON's ids, which the specification writes in hex
// (not protobuf JSON's base64), so that protojson reads them.
func hexIDs(body []byte) ([]byte, error) {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(body, &doc); err != nil {
		return nil, err
	}
	var rss []map[string]json.RawMessage
	raw, ok := doc["resourceSpans"]
	if !ok {
		raw, ok = doc["resource_spans"]
	}
	if !ok {
		return body, nil
	}
	if err := json.Unmarshal(raw, &rss); err != nil {
		return nil, fmt.Errorf("resourceSpans: %v", err)
	}
	for _, rs := range rss {
		var sss []map[string]json.RawMessage
		if err := json.Unmarshal(rs["scopeSpans"], &sss); rs["scopeSpans"] != nil && err != nil {
			return nil, fmt.Errorf("scopeSpans: %v", err)
		}
		for _, ss := range sss {
			var spans []map[string]json.RawMessage
			if err := json.Unmarshal(ss["spans"], &spans); ss["spans"] != nil && err != nil {
				return nil, fmt.Errorf("spans: %v", err)
			}
			for _, sp := range spans {
				for _, k := range []string{"traceId", "spanId", "parentSpanId"} {
					if err := hexField(sp, k); err != nil {
						return nil, err
					}
				}
				var links []map[string]json.RawMessage
				if json.Unmarshal(sp["links"], &links) == nil {
					for _, l := range links {
						if hexField(l, "traceId") != nil || hexField(l, "spanId") != nil {
							return nil, errors.New("a link's id is not hex")
						}
					}
					sp["links"], _ = json.Marshal(links)
				}
			}
			ss["spans"], _ = json.Marshal(spans)
		}
		rs["scopeSpans"], _ = json.Marshal(sss)
	}
	doc["resourceSpans"], _ = json.Marshal(rss)
	delete(doc, "resource_spans")
	return json.Marshal(doc)
}

// hexField turns m[k], a hex id, into base64.
func hexField(m map[string]json.RawMessage, k string) error {
	raw, ok := m[k]
	if !ok {
		return nil
	}
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return fmt.Errorf("%s: want a hex string", k)
	}
	b, err := hex.DecodeString(s)
	if err != nil {
		return fmt.Errorf("%s %q: not hex", k, s)
	}
	m[k], _ = json.Marshal(base64.StdEncoding.EncodeToString(b))
	return nil
}

// writeStatus answers with a google.rpc.Status, as OTLP/HTTP errors are.
func writeStatus(w http.ResponseWriter, asJSON bool, code int, msg string) {
	grpcCode := codes.InvalidArgument
	if code == http.StatusRequestEntityTooLarge {
		grpcCode = codes.ResourceExhausted
	}
	writeMessage(w, asJSON, code, &spb.Status{Code: int32(grpcCode), Message: msg})
}

func writeMessage(w http.ResponseWriter, asJSON bool, code int, m proto.Message) {
	var b []byte
	if asJSON {
		b, _ = protojson.Marshal(m)
		w.Header().Set("Content-Type", ctJSON)
	} else {
		b, _ = proto.Marshal(m)
		w.Header().Set("Content-Type", ctProto)
	}
	w.WriteHeader(code)
	_, _ = w.Write(b)
}

// GRPC is the OTLP/gRPC receiver: a server with the trace service
// registered, its messages capped at MaxRequest (decompressed: gzip is
// accepted).
func (c *Collector) GRPC() *grpc.Server {
	s := grpc.NewServer(grpc.MaxRecvMsgSize(int(c.o.MaxRequest)), grpc.MaxConcurrentStreams(maxDecoding))
	coltracepb.RegisterTraceServiceServer(s, grpcService{c: c})
	return s
}

type grpcService struct {
	coltracepb.UnimplementedTraceServiceServer
	c *Collector
}

// Export implements the trace service: a request whose every span is
// refused is InvalidArgument; one with some refused is a partial success.
func (g grpcService) Export(_ context.Context, req *coltracepb.ExportTraceServiceRequest) (*coltracepb.ExportTraceServiceResponse, error) {
	if allInvalid(req) {
		return nil, status.Error(codes.InvalidArgument, errInvalidIDs)
	}
	if g.c.fwd != nil {
		if b, err := proto.Marshal(req); err == nil {
			g.c.fwd.send(b, ctProto, "")
		}
	}
	rejected, why := g.c.Export(req)
	resp := &coltracepb.ExportTraceServiceResponse{}
	if rejected > 0 {
		resp.PartialSuccess = &coltracepb.ExportTracePartialSuccess{RejectedSpans: rejected, ErrorMessage: why}
	}
	return resp, nil
}

// allInvalid reports whether a request has spans and none of them has
// valid ids: malformed as a whole, refused with nothing stored.
func allInvalid(req *coltracepb.ExportTraceServiceRequest) bool {
	n := 0
	for _, rs := range req.GetResourceSpans() {
		for _, ss := range rs.GetScopeSpans() {
			for _, s := range ss.GetSpans() {
				if validID(s.TraceId, 16) && validID(s.SpanId, 8) {
					return false
				}
				n++
			}
		}
	}
	return n > 0
}
