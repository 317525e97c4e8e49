package gateway

import (
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/uuid"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/segmentio/encoding/json"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/gateway/auth"
	"github.com/anysqs/anysqs/gateway/policy"
	"github.com/anysqs/anysqs/gateway/sqserr"
	"github.com/anysqs/anysqs/gateway/wire"
	"github.com/anysqs/anysqs/internal/clock"
)

// Config configures a Server.
type Config struct {
	// Driver is the backend of an unrouted gateway; a routed gateway sets Backends and
	// Routes instead (routes.go).
	Driver    drivers.Driver
	Backends  []Backend
	Routes    []Route
	Clock     clock.Clock // nil: clock.Real{}
	AccountID string      // default "000000000000"
	Region    string      // default "us-east-1"
	// PublicURL is the base of queue URLs, e.g. "http://127.0.0.1:9324"; empty: built from
	// each request's Host header.
	PublicURL string
	Logger    *slog.Logger // nil: discard
	// SweepInterval is the retention sweep period on Clock; default 30s.
	SweepInterval time.Duration
	// Policy says what to do with capabilities the backend degrades; the zero value
	// degrades visibly (capabilities.DefaultMode).
	Policy capabilities.Config
	// QueueCacheTTL is how long (on Clock) queue metadata read for SendMessage(Batch) and
	// ReceiveMessage is reused before the backend is asked again; 0 means 1s, negative
	// disables the cache. Changes made through this Server take effect at once; changes
	// made through another gateway instance on the same backend are seen within the TTL,
	// well inside the up to 60 seconds SQS documents for attribute changes to propagate.
	QueueCacheTTL time.Duration
	// Credentials maps access key IDs to secret access keys. When set, every request must
	// carry a valid AWS Signature Version 4 by one of them; when empty, requests are not
	// authenticated.
	Credentials map[string]string
	// Accounts maps access key IDs to the 12-digit account each belongs to; a key not
	// listed, and every unauthenticated request, belongs to AccountID. Queues live in
	// their account's namespace (accounts.go).
	Accounts map[string]string
	// Metrics, when set, receives the gateway's Prometheus series (anysqs_*).
	Metrics prometheus.Registerer
	// ClientLimits bound each access key's request rate and concurrent long polls; the
	// zero value sets no limit.
	ClientLimits ClientLimits
	// MaxInFlight is the most in-flight messages a queue may hold (inflight.go); 0 means
	// SQS's DefaultMaxInFlight, a negative value no limit.
	MaxInFlight int64
	// QueueMetrics configures the per-queue series exported with Metrics.
	QueueMetrics QueueMetrics
}

// Server is the SQS gateway: an http.Handler speaking both SQS wire protocols.
type Server struct {
	cfg     Config
	clock   clock.Clock
	log     *slog.Logger
	actions map[string]action
	waiters *waiters
	queues  *queueCache // queue metadata for the message hot paths

	// backends are the gateway's backends, and routes with fallback say which holds each
	// queue (routes.go).
	backends []*backend
	routes   []route
	fallback *backend

	ctx    context.Context // cancelled by Close; parent of background work
	cancel context.CancelFunc
	bg     sync.WaitGroup

	metrics *metrics       // nil: none
	qm      *queueMetrics  // nil: no per-queue series
	auth    *auth.Verifier // nil: requests are not authenticated
	clients *clientLimiter // nil: no per-key limits

	// instance names this gateway among those sharing a backend (move task leases).
	instance string

	watchMu sync.Mutex
	watched map[string]time.Time // queue → until when this instance last watched it
	// watchedPruneAt is the size of watched at which lapsed watches are next dropped.
	watchedPruneAt int

	sweepMu    sync.Mutex
	sweepTimer clock.Timer
	closed     bool

	// onWait, when set (tests), is called each time a long poll starts waiting.
	onWait func(queue string)
	// onSweepArmed, when set (tests), is called each time the next sweep is scheduled.
	onSweepArmed func()
}

// action runs one SQS action on a decoded request.
type action func(ctx context.Context, c *call) (any, error)

// call is one request on its way through an action.
type call struct {
	action string
	body   []byte // the request as AWS JSON 1.0
	base   string // scheme://host of queue URLs for this request
	// srv decides, by the queue of the first need, whose backend's policy applies.
	srv   *Server
	trace *capabilities.Trace // capability decisions, made on first need
	// longPoll: a ReceiveMessage that may wait (metrics time it apart).
	longPoll bool
	// key is the access key the request was signed with; "" without authentication.
	key string
	// account is the account of key: the namespace of the queues it names, and the
	// principal queue policies judge.
	account string
	// traceHeader is the request's X-Amzn-Trace-Id, which SQS stores as a message's
	// AWSTraceHeader system attribute when the sender sets none.
	traceHeader string
	// facts are what the conditions of another account's queue policy read.
	facts policy.RequestFacts
}

// decode unmarshals the request body into in. A body of the wrong shape is the client's
// fault, so the error is a 400 naming the member concerned.
//
// The JSON package is segmentio/encoding/json, a drop-in for encoding/json that costs
// less CPU per request (BenchmarkServeHTTP compares them).
// FuzzJSONMatchesStdlib holds it to the standard library's results and errors on every
// request and response shape.
func (c *call) decode(in any) error {
	if len(bytes.TrimSpace(c.body)) == 0 {
		return nil
	}
	if !utf8.Valid(c.body) {
		// The decoder would replace each invalid byte with U+FFFD and store what the
		// client never sent.
		return sqserr.New(sqserr.InvalidParameterValue, "The request body is not valid UTF-8.")
	}
	if err := decodeError(c.action, json.Unmarshal(c.body, in)); err != nil {
		return err
	}
	return wire.CheckJSONText(c.body)
}

// decodeError turns an unmarshalling error into the SQS error the client gets. The
// message names the member by its JSON path and the types as JSON has them, not as Go
// does (encoding/json would name the embedded struct sendFields and Go types).
func decodeError(action string, err error) error {
	if err == nil {
		return nil
	}
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) {
		if te.Field == "" {
			return sqserr.New(sqserr.InvalidParameterValue, "The request body of %s must be a JSON object, not %s.", action, jsonKind(te.Value))
		}
		return sqserr.New(sqserr.InvalidParameterValue, "Value for parameter %s is invalid. Reason: expected %s, got JSON %s.", te.Field, expectedKind(te.Type), jsonKind(te.Value))
	}
	var se *json.SyntaxError
	if errors.As(err, &se) {
		return sqserr.New(sqserr.InvalidParameterValue, "The request body of %s is not valid JSON.", action)
	}
	return sqserr.New(sqserr.InvalidParameterValue, "The request body is not valid JSON for %s: %v", action, err)
}

// jsonKind names the JSON value of an UnmarshalTypeError: the kind ("string", "array",
// or "number 5.5" for a number that does not fit), from either the kind that
// encoding/json reports or the quoted input that segmentio/encoding reports.
func jsonKind(v string) string {
	if n, ok := strings.CutPrefix(v, "number "); ok {
		return "number " + strings.TrimSuffix(n, " overflows")
	}
	raw, err := strconv.Unquote(v)
	if err != nil {
		return v
	}
	raw = strings.TrimLeft(raw, " \t\r\n")
	if raw == "" {
		return "value"
	}
	switch raw[0] {
	case '"':
		return "string"
	case '{':
		return "object"
	case '[':
		return "array"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}

// expectedKind names the JSON kind a member of Go type t takes.
func expectedKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "string"
	case reflect.Bool:
		return "boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "integer"
	case reflect.Slice:
		if t.Elem().Kind() == reflect.Uint8 {
			return "base64-encoded string"
		}
		return "list"
	case reflect.Map:
		return "map"
	case reflect.Struct:
		return "object"
	}
	return t.String()
}

// maxRequestBytes bounds a request body: a 1 MiB batch, base64 or percent-encoded, fits.
const maxRequestBytes = 8 << 20

// New builds a Server around cfg.Driver, or cfg.Backends routed by cfg.Routes, and starts
// its background loops (retention sweeps, cross-instance activity). Close stops them; it
// does not close the drivers.
func New(ctx context.Context, cfg Config) (*Server, error) {
	if cfg.Clock == nil {
		cfg.Clock = clock.Real{}
	}
	if cfg.AccountID == "" {
		cfg.AccountID = "000000000000"
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	for key, a := range cfg.Accounts {
		if !policy.IsAccountID(a) {
			return nil, fmt.Errorf("gateway: the account of access key %s, %q, is not 12 digits", key, a)
		}
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	if cfg.SweepInterval <= 0 {
		cfg.SweepInterval = 30 * time.Second
	}
	if cfg.QueueCacheTTL == 0 {
		cfg.QueueCacheTTL = defaultQueueCacheTTL
	}
	cfg.PublicURL = strings.TrimRight(cfg.PublicURL, "/")
	bg, cancel := context.WithCancel(context.WithoutCancel(ctx))
	s := &Server{
		cfg: cfg, clock: cfg.Clock, log: cfg.Logger,
		waiters: newWaiters(), ctx: bg, cancel: cancel,
		queues: newQueueCache(cfg.QueueCacheTTL),
	}
	if err := s.openBackends(ctx, cfg); err != nil {
		cancel()
		return nil, err
	}
	s.instance = uuid.NewString()
	s.watched, s.watchedPruneAt = map[string]time.Time{}, minWatchedPrune
	for _, b := range s.backends {
		b.moves = newMoveTasks(s, b)
	}
	s.actions = s.actionTable()
	s.auth = auth.NewVerifier(cfg.Credentials)
	s.clients = newClientLimiter(cfg.ClientLimits, s.clock.Now)
	if cfg.Metrics != nil {
		m, err := newMetrics(cfg.Metrics, s)
		if err != nil {
			cancel()
			return nil, fmt.Errorf("gateway: metrics: %w", err)
		}
		s.metrics = m
		if cfg.QueueMetrics.Interval >= 0 {
			interval, max := cfg.QueueMetrics.Interval, cfg.QueueMetrics.MaxQueues
			if interval == 0 {
				interval = DefaultQueueMetricsInterval
			}
			if max <= 0 {
				max = DefaultMaxQueueMetrics
			}
			s.qm = newQueueMetrics(s, max)
			if err := cfg.Metrics.Register(s.qm); err != nil {
				cancel()
				return nil, fmt.Errorf("gateway: metrics: %w", err)
			}
			s.bg.Add(1)
			go s.qm.run(interval)
		}
	}
	if s.routed() {
		stranded, err := s.strandedQueues(ctx)
		if err != nil {
			s.Close()
			return nil, fmt.Errorf("gateway: %w", err)
		}
		for name, qs := range stranded {
			s.log.Warn("queues not served: stored on a backend their names do not route to", "backend", name, "queues", strings.Join(qs, ", "))
		}
	}
	s.scheduleSweep()
	for _, b := range s.backends {
		if b.desc.Activity == drivers.ActivityNotify || b.desc.Activity == drivers.ActivityWatch {
			s.bg.Add(1)
			go s.awaitActivityLoop(b)
		}
	}
	return s, nil
}

// Close stops the background loops and running move tasks and waits for them.
func (s *Server) Close() error {
	s.sweepMu.Lock()
	s.closed = true
	if s.sweepTimer != nil {
		s.sweepTimer.Stop()
	}
	s.sweepMu.Unlock()
	s.cancel()
	for _, b := range s.backends {
		b.moves.stopAll()
	}
	s.bg.Wait()
	for _, b := range s.backends {
		b.moves.release()
	}
	return nil
}

func (s *Server) actionTable() map[string]action {
	return map[string]action{
		"CreateQueue":                  s.createQueue,
		"GetQueueUrl":                  s.getQueueURL,
		"ListQueues":                   s.listQueues,
		"DeleteQueue":                  s.deleteQueue,
		"GetQueueAttributes":           s.getQueueAttributes,
		"SetQueueAttributes":           s.setQueueAttributes,
		"PurgeQueue":                   s.purgeQueue,
		"TagQueue":                     s.tagQueue,
		"UntagQueue":                   s.untagQueue,
		"ListQueueTags":                s.listQueueTags,
		"ListDeadLetterSourceQueues":   s.listDeadLetterSourceQueues,
		"SendMessage":                  s.sendMessage,
		"SendMessageBatch":             s.sendMessageBatch,
		"ReceiveMessage":               s.receiveMessage,
		"DeleteMessage":                s.deleteMessage,
		"DeleteMessageBatch":           s.deleteMessageBatch,
		"ChangeMessageVisibility":      s.changeMessageVisibility,
		"ChangeMessageVisibilityBatch": s.changeMessageVisibilityBatch,
		"StartMessageMoveTask":         s.startMessageMoveTask,
		"ListMessageMoveTasks":         s.listMessageMoveTasks,
		"CancelMessageMoveTask":        s.cancelMessageMoveTask,
		"AddPermission":                s.addPermission,
		"RemovePermission":             s.removePermission,
		PeekAction:                     s.peekMessages,
	}
}

// protocol is the wire protocol of one request.
type protocol int

const (
	protoQuery protocol = iota
	protoJSON
	// protoQueryJSON is a Query request that accepts JSON: decoded and its errors
	// rendered as Query, its results in SQS's legacy JSON (queryjson.go).
	protoQueryJSON
)

// ServeHTTP decodes one request in either protocol, runs its action and renders the result
// or error in the same protocol.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	reqID := uuid.NewString()
	proto := protoQuery
	if target := r.Header.Get("X-Amz-Target"); target != "" {
		proto = protoJSON
	} else if wire.AcceptsJSON(r.Header.Get("Accept")) {
		proto = protoQueryJSON
	}
	name, c, err := s.decodeRequest(w, r, proto)
	defer func() {
		// A panic is a gateway bug; the client still gets a well-formed InternalError and
		// the process keeps serving. The fuzz targets treat any 5xx as a failure.
		if p := recover(); p != nil {
			s.log.Error("panic serving request", "action", name, "request_id", reqID, "panic", p)
			err = sqserr.New(sqserr.InternalError, "internal error (request %s)", reqID)
			s.writeError(w, proto, reqID, name, err)
		}
		s.metrics.record(name, c, err, time.Since(start))
		if s.log.Enabled(context.Background(), slog.LevelDebug) {
			s.logRequest(name, c, err, reqID, time.Since(start))
		}
	}()
	var out any
	if err == nil {
		act, ok := s.actions[name]
		if !ok {
			err = sqserr.New(sqserr.InvalidAction, "The action %s is not valid for this endpoint.", name)
		} else {
			out, err = act(r.Context(), c)
		}
	}
	s.policyHeaders(w, r, c)
	if err != nil && r.Context().Err() != nil {
		// The client went away (closed the connection or gave up) before the answer: no
		// one is left to tell, and it is not the gateway's failure to log as one.
		s.log.Debug("client went away before the answer", "action", name, "request_id", reqID, "err", err)
		err = errClientGone
		return
	}
	if err != nil {
		s.writeError(w, proto, reqID, name, err)
		return
	}
	s.logEntryFaults(name, reqID, out)
	s.writeResult(w, proto, reqID, name, out)
}

// logRequest writes the debug line of one request: action, queue, outcome (ok or the
// SQS error code), duration and the request id the client was given.
func (s *Server) logRequest(action string, c *call, err error, reqID string, d time.Duration) {
	outcome := "ok"
	switch {
	case err == errClientGone:
		outcome = "ClientGone"
	case err != nil:
		outcome = string(toSQSError(err).Code)
	}
	var q struct {
		URL  string `json:"QueueUrl"`
		Name string `json:"QueueName"`
	}
	if c != nil {
		_ = json.Unmarshal(c.body, &q) // best effort: a body that does not parse has no queue
	}
	queue := q.Name
	if queue == "" && q.URL != "" {
		queue = q.URL[strings.LastIndex(q.URL, "/")+1:]
	}
	s.log.Debug("request", "action", action, "queue", queue, "outcome", outcome,
		"duration", d, "request_id", reqID)
}

// errClientGone stands for a call whose client left before its answer; the request
// metrics count it under the outcome "ClientGone".
var errClientGone = errors.New("client went away")

// decodeRequest returns the action name and the request normalised to AWS JSON 1.0.
func (s *Server) decodeRequest(w http.ResponseWriter, r *http.Request, proto protocol) (string, *call, error) {
	c := &call{base: s.baseURL(r), srv: s, traceHeader: r.Header.Get("X-Amzn-Trace-Id"),
		facts: policy.RequestFacts{RemoteAddr: r.RemoteAddr, Secure: r.TLS != nil, UserAgent: r.UserAgent(), Referer: r.Referer()}}
	var body []byte
	var err error
	if r.Body != nil { // server requests always have one; hand-built ones may not
		body, err = readBody(w, r)
	}
	if err != nil {
		return "", nil, sqserr.New(sqserr.InvalidParameterValue, "request body unreadable or larger than %d bytes: %v", maxRequestBytes, err)
	}
	if err := s.auth.Verify(r, body); err != nil {
		return "", nil, err
	}
	if s.auth != nil {
		c.key = accessKeyOf(r)
	}
	c.account = s.accountOf(c.key)
	if err := s.clients.admit(c.key); err != nil {
		return "", nil, err
	}
	if proto == protoJSON {
		target := r.Header.Get("X-Amz-Target")
		name, ok := strings.CutPrefix(target, "AmazonSQS.")
		if !ok {
			return target, nil, sqserr.New(sqserr.InvalidAction, "X-Amz-Target %q does not name an AmazonSQS action.", target)
		}
		// Every action decodes the body first (call.decode), which rejects invalid JSON;
		// checking here as well would parse each body twice.
		c.action, c.body = name, body
		return name, c, nil
	}
	form, err := url.ParseQuery(r.URL.RawQuery)
	if err != nil {
		return "", nil, sqserr.New(sqserr.InvalidParameterValue, "malformed query string: %v", err)
	}
	if r.Method == http.MethodPost {
		bodyForm, err := url.ParseQuery(string(body))
		if err != nil {
			return "", nil, sqserr.New(sqserr.InvalidParameterValue, "malformed form body: %v", err)
		}
		for k, v := range bodyForm {
			form[k] = append(form[k], v...)
		}
	}
	name := form.Get("Action")
	toQueue := r.URL.Path != "/" && r.URL.Path != ""
	if name == "" {
		if toQueue {
			return "", nil, errUnknownOperation
		}
		return "", nil, sqserr.New(sqserr.MissingParameter, "The request must contain the parameter Action.")
	}
	if toQueue && queuelessActions[name] {
		return name, nil, sqserr.New(sqserr.InvalidAction, "The action %s is not valid for this endpoint.", name)
	}
	// A request sent to the queue URL names its queue by path.
	if toQueue && form.Get("QueueUrl") == "" {
		form.Set("QueueUrl", r.URL.Path)
	}
	c.action = name
	if c.body, err = wire.QueryToJSON(name, form); err != nil {
		return name, nil, err
	}
	return name, c, nil
}

// readBody reads the request body, at most maxRequestBytes. A declared length is read
// into a buffer of that size at once: io.ReadAll would grow one from 512 bytes and copy
// on the way, the largest allocation of a small request.
func readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, maxRequestBytes)
	if n := r.ContentLength; n > 0 && n <= maxRequestBytes {
		body := make([]byte, n)
		if _, err := io.ReadFull(rd, body); err != nil {
			return nil, err
		}
		return body, nil
	}
	return io.ReadAll(rd)
}

// queuelessActions are the Query actions that address no queue, which SQS refuses at a
// queue URL.
var queuelessActions = map[string]bool{"CreateQueue": true, "ListQueues": true, "GetQueueUrl": true}

// errUnknownOperation is SQS's answer to a Query request at a queue URL that names no
// action: 404 with a bare <UnknownOperationException/>, in XML whatever the client accepts.
var errUnknownOperation = errors.New("no Action in a Query request to a queue URL")

// baseURL is scheme://host of the queue URLs returned to this request.
func (s *Server) baseURL(r *http.Request) string {
	if s.cfg.PublicURL != "" {
		return s.cfg.PublicURL
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	if p := r.Header.Get("X-Forwarded-Proto"); p == "https" || p == "http" {
		scheme = p
	}
	host := r.Host
	if host == "" {
		host = "localhost"
	}
	return scheme + "://" + host
}

func (s *Server) writeResult(w http.ResponseWriter, proto protocol, reqID, name string, out any) {
	w.Header().Set("x-amzn-RequestId", reqID)
	if proto == protoJSON {
		buf := jsonBuffers.Get().(*[]byte)
		body, err := wire.AppendJSON((*buf)[:0], out)
		if err != nil {
			jsonBuffers.Put(buf)
			s.writeError(w, proto, reqID, name, err)
			return
		}
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_, _ = w.Write(body)
		if cap(body) <= maxPooledJSON {
			*buf = body
			jsonBuffers.Put(buf)
		}
		return
	}
	var b bytes.Buffer
	if proto == protoQueryJSON {
		wire.RenderQueryJSON(&b, reqID, name, out)
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(b.Bytes())
		return
	}
	b.WriteString(xml.Header)
	b.WriteString(`<` + name + `Response xmlns="` + wire.XMLNamespace + `">`)
	if _, empty := out.(wire.Empty); !empty {
		open := b.Len()
		b.WriteString("<" + name + "Result>")
		inner := b.Len()
		wire.RenderXML(&b, reflect.Indirect(reflect.ValueOf(out)))
		if b.Len() == inner {
			// An empty result is self-closed, as SQS writes it: <ReceiveMessageResult/>.
			b.Truncate(open)
			b.WriteString("<" + name + "Result/>")
		} else {
			b.WriteString("</" + name + "Result>")
		}
	}
	b.WriteString("<ResponseMetadata><RequestId>" + reqID + "</RequestId></ResponseMetadata>")
	b.WriteString("</" + name + "Response>")
	w.Header().Set("Content-Type", "text/xml")
	_, _ = w.Write(b.Bytes())
}

// jsonBuffers hold response bodies between requests; a body larger than maxPooledJSON (a
// batch of large messages) is left to the collector rather than kept for every request.
var jsonBuffers = sync.Pool{New: func() any { b := make([]byte, 0, 4096); return &b }}

const maxPooledJSON = 64 << 10

func (s *Server) writeError(w http.ResponseWriter, proto protocol, reqID, name string, err error) {
	if errors.Is(err, errUnknownOperation) {
		w.Header().Set("x-amzn-RequestId", reqID)
		w.Header().Set("Content-Type", "text/xml")
		w.WriteHeader(http.StatusNotFound)
		_, _ = w.Write([]byte("<UnknownOperationException/>"))
		return
	}
	e := toSQSError(err)
	spec := sqserr.SpecOf(e.Code)
	if level, ok := faultLevel(e); ok {
		// The whole error, native cause included, goes to the log only. An SQS error
		// made from a driver's error says only the driver's summary: its cause carries
		// what the backend said.
		attrs := []any{"action", name, "request_id", reqID, "err", err}
		if e.Err != nil && e.Err != err {
			attrs = append(attrs, "cause", e.Err)
		}
		s.log.Log(context.Background(), level, "request failed", attrs...)
	}
	if !spec.Sender {
		// The client gets the request id to quote.
		e = &sqserr.Error{Code: e.Code, Message: e.Message + " (request " + reqID + ")", RetryAfter: e.RetryAfter}
	}
	w.Header().Set("x-amzn-RequestId", reqID)
	if e.RetryAfter > 0 {
		w.Header().Set("Retry-After", retryAfter(e.RetryAfter))
	}
	if proto == protoJSON {
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		w.Header().Set("x-amzn-query-error", spec.QueryCode+";"+spec.Fault())
		body, _ := json.Marshal(map[string]string{
			"__type":  "com.amazonaws.sqs#" + string(spec.Code),
			"message": e.Message,
		})
		w.WriteHeader(spec.Status)
		_, _ = w.Write(body)
		return
	}
	var b bytes.Buffer
	b.WriteString(xml.Header)
	b.WriteString(`<ErrorResponse xmlns="` + wire.XMLNamespace + `"><Error><Type>` + spec.Fault() + `</Type><Code>`)
	wire.EscapeXML(&b, spec.QueryCode)
	b.WriteString("</Code><Message>")
	if spec.Code == sqserr.QueueDoesNotExist {
		// SQS's Query wording; the JSON protocol's message names the queue.
		e.Message = "The specified queue does not exist for this wsdl version."
	}
	wire.EscapeXML(&b, e.Message)
	b.WriteString("</Message><Detail/></Error><RequestId>" + reqID + "</RequestId></ErrorResponse>")
	w.Header().Set("Content-Type", "text/xml")
	w.WriteHeader(spec.Status)
	_, _ = w.Write(b.Bytes())
}

// Ready reports whether every backend answers its driver's Ping. For readiness checks;
// it changes nothing.
func (s *Server) Ready(ctx context.Context) error {
	for _, b := range s.backends {
		if err := b.driver.Ping(ctx); err != nil {
			if s.routed() {
				return fmt.Errorf("backend %s: %w", b.name, err)
			}
			return err
		}
	}
	return nil
}
