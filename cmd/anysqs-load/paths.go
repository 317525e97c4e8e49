package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"net/http"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	awshttp "github.com/aws/aws-sdk-go-v2/aws/transport/http"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"
	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/plugin"
	"github.com/anysqs/anysqs/drivers/postgres"
	"github.com/anysqs/anysqs/gateway/queueattr"
)

// path is one way of doing the send → receive → delete cycle: through the gateway with
// the SDK, through the PostgreSQL driver in process, or in hand-written SQL.
type path interface {
	Name() string
	// Queue creates a fresh queue and returns what the other calls need to address it.
	Queue(ctx context.Context, name string, fifo bool) (string, error)
	// Send stores len(bodies) messages; groups is nil for standard queues.
	Send(ctx context.Context, q string, bodies, groups []string) error
	// Receive claims up to max messages and returns their receipt handles.
	Receive(ctx context.Context, q string, max int) ([]string, error)
	// Delete deletes messages by receipt handle.
	Delete(ctx context.Context, q string, handles []string) error
	Close()
}

// visibility is the visibility timeout of every receive: long enough that nothing is
// redelivered during a phase.
const visibility = 120

// gatewayPath speaks the AWS JSON protocol to a running gateway with aws-sdk-go-v2.
type gatewayPath struct{ c *sqs.Client }

func newGatewayPath(endpoint string, conns int) *gatewayPath {
	hc := awshttp.NewBuildableClient().WithTransportOptions(func(tr *http.Transport) {
		tr.MaxIdleConns = conns * 2
		tr.MaxIdleConnsPerHost = conns * 2
	})
	return &gatewayPath{c: sqs.New(sqs.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDLOADGEN", "secret", ""),
		HTTPClient:   hc,
		// One attempt and no client-side retry quota: a benchmark counts errors, it does
		// not hide them behind retries.
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 1
			o.RateLimiter = ratelimit.None
		}),
		APIOptions: []func(*middleware.Stack) error{timeHTTP},
	})}
}

// httpTimesKey carries the recorder into which timeHTTP records a call's HTTP exchange.
type httpTimesKey struct{}

// withHTTPTimes makes gateway calls made with ctx record their HTTP exchange in rec as
// "send http", "receive http" and "delete http".
func withHTTPTimes(ctx context.Context, rec *recorder) context.Context {
	return context.WithValue(ctx, httpTimesKey{}, rec)
}

var httpKind = map[string]string{"SendMessage": "send", "SendMessageBatch": "send", "ReceiveMessage": "receive",
	"DeleteMessage": "delete", "DeleteMessageBatch": "delete"}

// timeHTTP times the innermost step of each SDK call, the HTTP exchange as the SDK's
// transport sees it (request out, response headers in): what the gateway, loopback and
// PostgreSQL take, without the SDK's own work around it. A call's total latency minus
// this is the client's share.
func timeHTTP(st *middleware.Stack) error {
	return st.Deserialize.Add(middleware.DeserializeMiddlewareFunc("anysqs-load/http",
		func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (
			middleware.DeserializeOutput, middleware.Metadata, error) {
			rec, _ := ctx.Value(httpTimesKey{}).(*recorder)
			kind, ok := httpKind[middleware.GetOperationName(ctx)]
			if rec == nil || !ok {
				return next.HandleDeserialize(ctx, in)
			}
			start := time.Now()
			out, md, err := next.HandleDeserialize(ctx, in)
			rec.add(kind+" http", time.Since(start), nil) // errors count once, on the call
			return out, md, err
		}), middleware.After)
}

func (*gatewayPath) Name() string { return "gateway" }
func (*gatewayPath) Close()       {}

func (p *gatewayPath) Queue(ctx context.Context, name string, fifo bool) (string, error) {
	var attrs map[string]string
	if fifo {
		name += ".fifo"
		attrs = map[string]string{"FifoQueue": "true"}
	}
	out, err := p.c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.QueueUrl), nil
}

func (p *gatewayPath) Send(ctx context.Context, q string, bodies, groups []string) error {
	if len(bodies) == 1 {
		in := &sqs.SendMessageInput{QueueUrl: aws.String(q), MessageBody: aws.String(bodies[0])}
		if groups != nil {
			in.MessageGroupId, in.MessageDeduplicationId = aws.String(groups[0]), aws.String(uuid.NewString())
		}
		_, err := p.c.SendMessage(ctx, in)
		return err
	}
	entries := make([]types.SendMessageBatchRequestEntry, len(bodies))
	for i, b := range bodies {
		entries[i] = types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), MessageBody: aws.String(b)}
		if groups != nil {
			entries[i].MessageGroupId, entries[i].MessageDeduplicationId = aws.String(groups[i]), aws.String(uuid.NewString())
		}
	}
	out, err := p.c.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: aws.String(q), Entries: entries})
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("send batch: %d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Message))
	}
	return err
}

func (p *gatewayPath) Receive(ctx context.Context, q string, max int) ([]string, error) {
	out, err := p.c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(q),
		MaxNumberOfMessages: int32(max), VisibilityTimeout: visibility})
	if err != nil {
		return nil, err
	}
	hs := make([]string, len(out.Messages))
	for i, m := range out.Messages {
		hs[i] = aws.ToString(m.ReceiptHandle)
	}
	return hs, nil
}

func (p *gatewayPath) Delete(ctx context.Context, q string, handles []string) error {
	if len(handles) == 1 {
		_, err := p.c.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: aws.String(q), ReceiptHandle: aws.String(handles[0])})
		return err
	}
	entries := make([]types.DeleteMessageBatchRequestEntry, len(handles))
	for i, h := range handles {
		entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h)}
	}
	out, err := p.c.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: aws.String(q), Entries: entries})
	if err == nil && len(out.Failed) > 0 {
		err = fmt.Errorf("delete batch: %d entries failed: %s", len(out.Failed), aws.ToString(out.Failed[0].Message))
	}
	return err
}

// driverPath calls the PostgreSQL driver in process: the statements the gateway would
// run, without HTTP, the SDK or the gateway's parsing and validation. With lookup set it
// also reads the queue (GetQueue) before each send and receive, as the gateway does to
// resolve the queue's attributes, so the cost of that extra round trip shows on its own.
type driverPath struct {
	d      drivers.Driver
	lookup bool
	plugin *plugin.Host // the driver-plugin path: d is the PostgreSQL driver as a plugin
}

func newDriverPath(ctx context.Context, dsn, schema string, conns int32) (*driverPath, error) {
	d, err := postgres.Open(ctx, postgres.Options{DSN: dsn, Schema: schema, MaxConns: conns})
	if err != nil {
		return nil, err
	}
	return &driverPath{d: d}, nil
}

// newPluginDriverPath is the driver path with the PostgreSQL driver in a plugin process
// (bin driver serve postgres, through drivers/plugin): the boundary's cost on its own.
func newPluginDriverPath(ctx context.Context, bin, dsn, schema string, conns int32) (*driverPath, error) {
	b, err := os.ReadFile(bin)
	if err != nil {
		return nil, fmt.Errorf("--plugin: %w", err)
	}
	sum := sha256.Sum256(b)
	h, err := plugin.Open(ctx, plugin.Options{Path: bin, Args: []string{"driver", "serve", "postgres"},
		Checksum: "sha256:" + hex.EncodeToString(sum[:]),
		Config:   map[string]any{"dsn": dsn, "schema": schema, "max_conns": conns}})
	if err != nil {
		return nil, err
	}
	return &driverPath{d: h, plugin: h}, nil
}

// PID is the plugin process's, for the CPU meter; 0 for the in-process driver.
func (p *driverPath) PID() int {
	if p.plugin == nil {
		return 0
	}
	return p.plugin.PID()
}

func (p *driverPath) Name() string {
	if p.plugin != nil {
		return "driver-plugin"
	}
	if p.lookup {
		return "driver+lookup"
	}
	return "driver"
}

// resolve reads the queue like the gateway's getQueue when lookup is set.
func (p *driverPath) resolve(ctx context.Context, q string) error {
	if !p.lookup {
		return nil
	}
	_, err := p.d.GetQueue(ctx, drivers.GetQueueRequest{Name: q})
	return err
}
func (p *driverPath) Close() { p.d.Close() }

func (p *driverPath) Queue(ctx context.Context, name string, fifo bool) (string, error) {
	if fifo {
		name += ".fifo"
	}
	now := time.Now()
	_, err := p.d.CreateQueue(ctx, drivers.CreateQueueRequest{Queue: drivers.Queue{
		Name: name, Attributes: queueattr.Defaults(fifo), CreatedAt: now, LastModified: now}})
	return name, err
}

func (p *driverPath) Send(ctx context.Context, q string, bodies, groups []string) error {
	if err := p.resolve(ctx, q); err != nil {
		return err
	}
	entries := make([]drivers.SendEntry, len(bodies))
	for i, b := range bodies {
		entries[i] = drivers.SendEntry{EntryID: strconv.Itoa(i), MessageID: uuid.NewString(), Body: b}
		if groups != nil {
			entries[i].MessageGroupID, entries[i].MessageDeduplicationID = groups[i], uuid.NewString()
		}
	}
	res, err := p.d.SendMessages(ctx, drivers.SendMessagesRequest{Name: q, Now: time.Now(), Entries: entries})
	if err != nil {
		return err
	}
	for _, e := range res.Entries {
		if e.Err != nil {
			return e.Err
		}
	}
	return nil
}

func (p *driverPath) Receive(ctx context.Context, q string, max int) ([]string, error) {
	if err := p.resolve(ctx, q); err != nil {
		return nil, err
	}
	res, err := p.d.ReceiveMessages(ctx, drivers.ReceiveMessagesRequest{Name: q, Now: time.Now(),
		MaxMessages: max, VisibilityTimeout: visibility})
	if err != nil {
		return nil, err
	}
	hs := make([]string, len(res.Messages))
	for i, m := range res.Messages {
		hs[i] = m.ReceiptHandle
	}
	return hs, nil
}

func (p *driverPath) Delete(ctx context.Context, q string, handles []string) error {
	entries := make([]drivers.DeleteEntry, len(handles))
	for i, h := range handles {
		entries[i] = drivers.DeleteEntry{EntryID: strconv.Itoa(i), ReceiptHandle: h}
	}
	res, err := p.d.DeleteMessages(ctx, drivers.DeleteMessagesRequest{Name: q, Now: time.Now(), Entries: entries})
	if err != nil {
		return err
	}
	for _, e := range res.Entries {
		if e.Err != nil {
			return e.Err
		}
	}
	return nil
}

// sqlPath is the cycle in plain SQL on the driver's messages table, the way a program
// that used PostgreSQL as a queue directly would do it (pgmq-style claim): one INSERT,
// one UPDATE ... FOR UPDATE SKIP LOCKED ... RETURNING, one DELETE. Standard queues only:
// FIFO in SQL is what the driver does.
type sqlPath struct {
	pool   *pgxpool.Pool
	driver *driverPath // creates the queue row
}

func newSQLPath(ctx context.Context, dsn, schema string, conns int32) (*sqlPath, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["search_path"] = pgx.Identifier{schema}.Sanitize()
	// The driver's own setting. Left to choose per execution, PostgreSQL plans these
	// statements anew each time (half again the CPU of a batch-1 cycle) and, for a queue
	// created after the last ANALYZE, sometimes picks a delete that walks every entry of
	// the queue: this path ran at 1,200, 2,700 or 4,000 msg/s at batch 1 depending on
	// which plans its connections settled on.
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_generic_plan"
	cfg.MaxConns = conns
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	d, err := newDriverPath(ctx, dsn, schema, 1)
	if err != nil {
		pool.Close()
		return nil, err
	}
	return &sqlPath{pool: pool, driver: d}, nil
}

func (*sqlPath) Name() string { return "sql" }
func (p *sqlPath) Close()     { p.pool.Close(); p.driver.Close() }

func (p *sqlPath) Queue(ctx context.Context, name string, fifo bool) (string, error) {
	if fifo {
		return "", fmt.Errorf("the sql path runs standard queues only")
	}
	if _, err := p.driver.Queue(ctx, name, false); err != nil {
		return "", err
	}
	var id int32
	err := p.pool.QueryRow(ctx, `SELECT id FROM queues WHERE name = $1`, name).Scan(&id)
	return strconv.Itoa(int(id)), err
}

func (p *sqlPath) Send(ctx context.Context, q string, bodies, _ []string) error {
	ids := make([]string, len(bodies))
	for i := range ids {
		ids[i] = uuid.NewString()
	}
	_, err := p.pool.Exec(ctx, `INSERT INTO messages (queue_id, message_id, body, sent_at, enqueued_at, visible_at)
		SELECT $1, u.id, u.body, now(), now(), now() FROM unnest($2::text[], $3::text[]) AS u(id, body)`, queueID(q), ids, bodies)
	return err
}

func (p *sqlPath) Receive(ctx context.Context, q string, max int) ([]string, error) {
	// The candidates are joined on the primary key: written as "id IN (subquery)" next to
	// "queue_id = $1", the planner may walk every row of the queue, dead ones included.
	rows, err := p.pool.Query(ctx, `UPDATE messages m SET receipt = gen_random_uuid(),
			visible_at = now() + make_interval(secs => $3), receive_count = m.receive_count + 1
		FROM (SELECT queue_id, id FROM messages WHERE queue_id = $1 AND visible_at <= now()
			ORDER BY visible_at LIMIT $2 FOR UPDATE SKIP LOCKED) c
		WHERE m.queue_id = c.queue_id AND m.id = c.id
		RETURNING m.id::text || ':' || m.receipt::text, m.message_id, m.body`, queueID(q), max, visibility)
	if err != nil {
		return nil, err
	}
	var hs []string
	for rows.Next() {
		var h, id, body string
		if err := rows.Scan(&h, &id, &body); err != nil {
			rows.Close()
			return nil, err
		}
		hs = append(hs, h)
	}
	return hs, rows.Err()
}

func (p *sqlPath) Delete(ctx context.Context, q string, handles []string) error {
	ids, receipts := make([]int64, len(handles)), make([]string, len(handles))
	for i, h := range handles {
		id, receipt, _ := strings.Cut(h, ":")
		ids[i], _ = strconv.ParseInt(id, 10, 64)
		receipts[i] = receipt
	}
	_, err := p.pool.Exec(ctx, `DELETE FROM messages m USING unnest($2::bigint[], $3::uuid[]) AS h(id, receipt)
		WHERE m.queue_id = $1 AND m.id = ANY ($2) AND m.id = h.id AND m.receipt = h.receipt`, queueID(q), ids, receipts)
	return err
}

// queueID parses the id sqlPath.Queue returned.
func queueID(q string) int32 {
	n, _ := strconv.Atoi(q)
	return int32(n)
}
