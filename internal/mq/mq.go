package mq

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/url"
	"os"
	"sort"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/feature/ec2/imds"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/drivers/sqsrule"
	"github.com/anysqs/anysqs/internal/cli"
	"github.com/anysqs/anysqs/internal/sqsclient"
)

// mqCommand is one `anysqs mq` subcommand. Each speaks SQS through aws-sdk-go-v2, so it
// works against any anysqs backend, with or without auth, and against AWS SQS itself.
type mqCommand struct {
	name, synopsis, summary string
	run                     func(ctx context.Context, m *mq, fs *cli.Flags, args []string) error
}

var mqCommands []mqCommand

func init() {
	mqCommands = []mqCommand{
		{"list", "[--prefix P]", "queues with their visible, in-flight and delayed counts", mqList},
		{"create", "-q NAME [--fifo] [--dlq NAME --max-receives N] [--attr K=V]...", "create a queue", mqCreate},
		{"delete", "-q QUEUE", "delete a queue and its messages", mqDelete},
		{"attributes", "-q QUEUE [--set K=V]...", "show a queue's attributes, or set some", mqAttributes},
		{"purge", "-q QUEUE", "delete every message of a queue", mqPurge},
		{"send", "-q QUEUE (--body TEXT | --body -) [flags]", "send a message, or one per stdin line in batches", mqSend},
		{"receive", "-q QUEUE [-m N] [-w SECONDS] [--visibility SECONDS] [--delete]", "receive messages", mqReceive},
		{"peek", "-q QUEUE [--limit N] [--after TOKEN]", "list messages without receiving them (anysqs only)", mqPeek},
		{"visibility", "-q QUEUE -r HANDLE -t SECONDS", "change a received message's visibility timeout", mqVisibility},
		{"delete-batch", "-q QUEUE -r HANDLE[,HANDLE...] | -r -", "delete received messages by receipt handle", mqDeleteBatch},
		{"dlq", "-q SOURCE [--sample N]", "a queue's dead-letter queue, its depth and sample messages", mqDLQ},
		{"redrive", "-q QUEUE [--to DEST] [--rate N] [--no-wait]", "move messages out of a dead-letter queue, with progress", mqRedrive},
	}
}

// CommandNames lists the subcommands, for completion.
func CommandNames() string {
	names := make([]string, len(mqCommands))
	for i, c := range mqCommands {
		names[i] = c.name
	}
	return strings.Join(names, " ")
}

// mq is the connection and output settings shared by every subcommand.
type mq struct {
	Conn
	output string
	client *sqs.Client
	stdout io.Writer
	stdin  io.Reader
}

// Conn is how a command reaches SQS: a gateway's endpoint, or AWS SQS itself, and the
// credentials to sign with (anysqs mq's and anysqs verify's connection flags).
type Conn struct {
	Endpoint, Region, Profile, AccessKey, SecretKey string
}

// Flags adds the connection flags to fs.
func (c *Conn) Flags(fs *cli.Flags) {
	fs.StringVar(&c.Endpoint, "endpoint", c.Endpoint, "gateway `URL`, or aws for AWS SQS")
	fs.StringVar(&c.Region, "region", c.Region, "AWS `REGION`")
	fs.StringVar(&c.Profile, "profile", c.Profile, "AWS shared-config `PROFILE`")
	fs.StringVar(&c.AccessKey, "access-key-id", c.AccessKey, "access `KEY` (with --secret-access-key)")
	fs.StringVar(&c.SecretKey, "secret-access-key", c.SecretKey, "secret `KEY`")
}

const mqAbout = `Queue chores against a running gateway (any backend) or AWS SQS, over the SQS API.

Endpoint: --endpoint, else $ANYSQS_ENDPOINT, else $AWS_ENDPOINT_URL_SQS or $AWS_ENDPOINT_URL,
else http://127.0.0.1:9324; --endpoint aws means AWS SQS itself. Region: --region, else the
AWS environment and profile, else us-east-1. Credentials: --access-key-id/--secret-access-key,
else the AWS SDK's chain (AWS_ACCESS_KEY_ID..., --profile or AWS_PROFILE, SSO, roles); with
none found, a gateway without auth is called with placeholder keys.
QUEUE is a queue name or URL. Connection flags go before or after the subcommand.

Subcommands:
`

// mqFlags adds the connection and output flags to fs.
func (m *mq) flags(fs *cli.Flags) {
	m.Conn.Flags(fs)
	fs.StringVar(&m.output, "output", m.output, "table or json")
}

// Run runs `anysqs mq` with args (after "mq"): stdin is where send --body - and
// delete-batch -r - read.
func Run(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	m := &mq{output: "table", stdout: stdout, stdin: stdin}
	about := mqAbout
	for _, c := range mqCommands {
		about += fmt.Sprintf("  %-13s %s\n", c.name, c.summary)
	}
	about += "\nRun `anysqs mq SUBCOMMAND --help` for its flags."
	top := cli.NewFlags("mq", "[connection flags] SUBCOMMAND [flags]", about)
	m.flags(top)
	if err := top.ParseArgs(args, stdout); err != nil {
		return err
	}
	rest := top.Args()
	if len(rest) == 0 {
		return cli.Usagef("mq: name a subcommand: %s (see anysqs mq --help)", CommandNames())
	}
	for _, c := range mqCommands {
		if c.name != rest[0] {
			continue
		}
		fs := cli.NewFlags("mq "+c.name, c.synopsis, c.summary+".")
		m.flags(fs)
		return c.run(ctx, m, fs, rest[1:])
	}
	return cli.Usagef("unknown mq subcommand %q; subcommands: %s", rest[0], CommandNames())
}

// parse parses the subcommand's flags, checks the output format and connects.
func (m *mq) parse(fs *cli.Flags, args []string, required ...string) error {
	if err := fs.ParseArgs(args, m.stdout); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	for _, name := range required {
		if f := fs.Lookup(name); f != nil && f.Value.String() == "" {
			return cli.Usagef("%s: --%s is required (see anysqs %s --help)", fs.Name(), name, fs.Name())
		}
	}
	if m.output != "table" && m.output != "json" {
		return cli.Usagef("%s: --output %q: want table or json", fs.Name(), m.output)
	}
	return nil
}

// connect builds the SQS client once the flags are known.
func (m *mq) connect(ctx context.Context) error {
	cfg, endpoint, err := m.Conn.Config(ctx)
	if err != nil {
		return err
	}
	m.client = sqs.NewFromConfig(cfg, func(o *sqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	return nil
}

// Config resolves the connection: the AWS configuration to build clients from, and the
// endpoint to set on them ("" for AWS SQS itself, whose regional endpoint the SDK picks).
func (c Conn) Config(ctx context.Context) (cfg aws.Config, endpoint string, err error) {
	var opts []func(*awsconfig.LoadOptions) error
	if c.Region != "" {
		opts = append(opts, awsconfig.WithRegion(c.Region))
	}
	if c.Profile != "" {
		opts = append(opts, awsconfig.WithSharedConfigProfile(c.Profile))
	}
	if c.AccessKey != "" || c.SecretKey != "" {
		opts = append(opts, awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(c.AccessKey, c.SecretKey, "")))
	}
	endpoint = c.Endpoint
	if endpoint == "" {
		endpoint = os.Getenv("ANYSQS_ENDPOINT")
	}
	if endpoint == "" && os.Getenv("AWS_ENDPOINT_URL_SQS") == "" && os.Getenv("AWS_ENDPOINT_URL") == "" {
		endpoint = "http://127.0.0.1:9324"
	}
	if endpoint == "aws" {
		endpoint = ""
	}
	if endpoint != "" {
		// Off AWS, instance credentials mean nothing: do not ask EC2's metadata service.
		opts = append(opts, awsconfig.WithEC2IMDSClientEnableState(imds.ClientDisabled))
	}
	cfg, err = awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return cfg, "", fmt.Errorf("AWS configuration: %w", err)
	}
	if cfg.Region == "" {
		cfg.Region = "us-east-1"
	}
	if endpoint != "" {
		if u, err := url.Parse(endpoint); err != nil || u.Scheme == "" || u.Host == "" {
			return cfg, "", cli.Usagef("--endpoint %q: want a URL such as http://127.0.0.1:9324, or aws", endpoint)
		}
		if _, err := cfg.Credentials.Retrieve(ctx); err != nil {
			// A gateway without auth takes any signature; the SDK still needs keys to sign.
			cfg.Credentials = credentials.NewStaticCredentialsProvider("anysqs", "anysqs", "")
		}
	}
	return cfg, endpoint, nil
}

// queueURL resolves a queue name (or takes a URL as it is).
func (m *mq) queueURL(ctx context.Context, q string) (string, error) {
	if strings.HasPrefix(q, "http://") || strings.HasPrefix(q, "https://") {
		return q, nil
	}
	out, err := m.client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(q)})
	if err != nil {
		return "", sqsclient.Err(q, err)
	}
	return aws.ToString(out.QueueUrl), nil
}

// emit prints v as JSON, or calls table with a tab writer.
func (m *mq) emit(v any, table func(w io.Writer)) error {
	if m.output == "json" {
		enc := json.NewEncoder(m.stdout)
		enc.SetIndent("", "  ")
		return enc.Encode(v)
	}
	tw := tabwriter.NewWriter(m.stdout, 0, 4, 2, ' ', 0)
	table(tw)
	return tw.Flush()
}

// kv collects repeated K=V flags.
type kv map[string]string

func (k kv) String() string { return "" }
func (k kv) Set(s string) error {
	key, v, ok := strings.Cut(s, "=")
	if !ok || key == "" {
		return fmt.Errorf("%q is not KEY=VALUE", s)
	}
	k[key] = v
	return nil
}

var countAttrs = []types.QueueAttributeName{
	types.QueueAttributeNameApproximateNumberOfMessages,
	types.QueueAttributeNameApproximateNumberOfMessagesNotVisible,
	types.QueueAttributeNameApproximateNumberOfMessagesDelayed,
}

// QueueCounts is a queue as `mq list --output json` prints it.
type QueueCounts struct {
	Name     string `json:"name"`
	URL      string `json:"url"`
	Visible  int    `json:"visible"`
	InFlight int    `json:"in_flight"`
	Delayed  int    `json:"delayed"`
}

func mqList(ctx context.Context, m *mq, fs *cli.Flags, args []string) error {
	prefix := fs.String("prefix", "", "only queues whose name starts with `P`")
	if err := m.parse(fs, args); err != nil {
		return err
	}
	if err := m.connect(ctx); err != nil {
		return err
	}
	var rows []QueueCounts
	in := &sqs.ListQueuesInput{MaxResults: aws.Int32(1000)}
	if *prefix != "" {
		in.QueueNamePrefix = prefix
	}
	for p := sqs.NewListQueuesPaginator(m.client, in); p.HasMorePages(); {
		page, err := p.NextPage(ctx)
		if err != nil {
			return sqsclient.Err("list", err)
		}
		for _, u := range page.QueueUrls {
			row := QueueCounts{Name: sqsclient.QueueName(u), URL: u}
			a, err := m.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u), AttributeNames: countAttrs})
			if err != nil {
				return sqsclient.Err(row.Name, err)
			}
			row.Visible, _ = strconv.Atoi(a.Attributes[string(countAttrs[0])])
			row.InFlight, _ = strconv.Atoi(a.Attributes[string(countAttrs[1])])
			row.Delayed, _ = strconv.Atoi(a.Attributes[string(countAttrs[2])])
			rows = append(rows, row)
		}
	}
	return m.emit(map[string]any{"queues": orEmpty(rows)}, func(w io.Writer) {
		fmt.Fprintln(w, "NAME\tVISIBLE\tIN-FLIGHT\tDELAYED\tURL")
		for _, r := range rows {
			fmt.Fprintf(w, "%s\t%d\t%d\t%d\t%s\n", r.Name, r.Visible, r.InFlight, r.Delayed, r.URL)
		}
	})
}

func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

func mqCreate(ctx context.Context, m *mq, fs *cli.Flags, args []string) error {
	name := fs.String("q", "", "queue `NAME` (FIFO names end in .fifo)")
	fifo := fs.Bool("fifo", false, "a FIFO queue (the name gets .fifo if it lacks it)")
	dlq := fs.String("dlq", "", "dead-letter queue `NAME` or URL, created if missing")
	maxReceives := fs.Int("max-receives", 0, "receives before a message moves to --dlq (default 5 with --dlq)")
	attrs := kv{}
	fs.Var(attrs, "attr", "queue attribute `K=V`, repeatable (VisibilityTimeout=30, ...)")
	if err := m.parse(fs, args, "q"); err != nil {
		return err
	}
	if *maxReceives != 0 && *dlq == "" {
		return cli.Usagef("mq create: --max-receives needs --dlq")
	}
	if err := m.connect(ctx); err != nil {
		return err
	}
	if *fifo {
		attrs["FifoQueue"] = "true"
		if !strings.HasSuffix(*name, ".fifo") {
			*name += ".fifo"
		}
	}
	if *dlq != "" {
		dlqName := *dlq
		dlqAttrs := map[string]string{}
		if attrs["FifoQueue"] == "true" {
			dlqAttrs["FifoQueue"] = "true"
		}
		if _, err := m.client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(dlqName), Attributes: dlqAttrs}); err != nil {
			return sqsclient.Err(dlqName, err)
		}
		u, err := m.queueURL(ctx, dlqName)
		if err != nil {
			return err
		}
		arn, err := m.queueARN(ctx, u)
		if err != nil {
			return err
		}
		if *maxReceives == 0 {
			*maxReceives = 5
		}
		policy, _ := json.Marshal(map[string]any{"deadLetterTargetArn": arn, "maxReceiveCount": *maxReceives})
		attrs["RedrivePolicy"] = string(policy)
	}
	out, err := m.client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: name, Attributes: attrs})
	if err != nil {
		return sqsclient.Err(*name, err)
	}
	u := aws.ToString(out.QueueUrl)
	return m.emit(map[string]string{"queue_url": u}, func(w io.Writer) { fmt.Fprintln(w, u) })
}

func (m *mq) queueARN(ctx context.Context, u string) (string, error) {
	a, err := m.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(u),
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameQueueArn}})
	if err != nil {
		return "", sqsclient.Err(sqsclient.QueueName(u), err)
	}
	return a.Attributes["QueueArn"], nil
}

func mqDelete(ctx context.Context, m *mq, fs *cli.Flags, args []string) error {
	q := fs.String("q", "", "`QUEUE` name or URL")
	if err := m.parse(fs, args, "q"); err != nil {
		return err
	}
	if err := m.connect(ctx); err != nil {
		return err
	}
	u, err := m.queueURL(ctx, *q)
	if err != nil {
		return err
	}
	if _, err := m.client.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &u}); err != nil {
		return sqsclient.Err(*q, err)
	}
	return m.emit(map[string]string{"deleted": u}, func(w io.Writer) { fmt.Fprintln(w, "deleted", u) })
}

func mqPurge(ctx context.Context, m *mq, fs *cli.Flags, args []string) error {
	q := fs.String("q", "", "`QUEUE` name or URL")
	if err := m.parse(fs, args, "q"); err != nil {
		return err
	}
	if err := m.connect(ctx); err != nil {
		return err
	}
	u, err := m.queueURL(ctx, *q)
	if err != nil {
		return err
	}
	if _, err := m.client.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &u}); err != nil {
		return sqsclient.Err(*q, err)
	}
	return m.emit(map[string]string{"purged": u}, func(w io.Writer) { fmt.Fprintln(w, "purged", u) })
}

func mqAttributes(ctx context.Context, m *mq, fs *cli.Flags, args []string) error {
	q := fs.String("q", "", "`QUEUE` name or URL")
	set := kv{}
	fs.Var(set, "set", "set attribute `K=V`, repeatable; without it, show all")
	if err := m.parse(fs, args, "q"); err != nil {
		return err
	}
	if err := m.connect(ctx); err != nil {
		return err
	}
	u, err := m.queueURL(ctx, *q)
	if err != nil {
		return err
	}
	if len(set) > 0 {
		if _, err := m.client.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &u, Attributes: set}); err != nil {
			return sqsclient.Err(*q, err)
		}
	}
	a, err := m.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &u,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	if err != nil {
		return sqsclient.Err(*q, err)
	}
	return m.emit(map[string]any{"queue_url": u, "attributes": a.Attributes}, func(w io.Writer) {
		keys := make([]string, 0, len(a.Attributes))
		for k := range a.Attributes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(w, "%s\t%s\n", k, a.Attributes[k])
		}
	})
}

func mqSend(ctx context.Context, m *mq, fs *cli.Flags, args []string) error {
	q := fs.String("q", "", "`QUEUE` name or URL")
	body := fs.String("body", "", "message `TEXT`; - sends one message per line of stdin, in batches")
	group := fs.String("group", "", "message group `ID` (FIFO queues)")
	dedup := fs.String("dedup-id", "", "deduplication `ID` (FIFO queues without content-based deduplication)")
	delay := fs.Int("delay", 0, "delivery delay in `SECONDS`")
	batch := fs.Int("batch", 10, "messages per SendMessageBatch with --body - (1-10)")
	attrs := kv{}
	fs.Var(attrs, "attr", "string message attribute `K=V`, repeatable")
	if err := m.parse(fs, args, "q", "body"); err != nil {
		return err
	}
	if *batch < 1 || *batch > sqsrule.MaxBatchEntries {
		return cli.Usagef("mq send: --batch %d: want 1 to %d", *batch, sqsrule.MaxBatchEntries)
	}
	if err := m.connect(ctx); err != nil {
		return err
	}
	u, err := m.queueURL(ctx, *q)
	if err != nil {
		return err
	}
	mattrs := map[string]types.MessageAttributeValue{}
	for k, v := range attrs {
		mattrs[k] = types.MessageAttributeValue{DataType: aws.String("String"), StringValue: aws.String(v)}
	}
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return aws.String(s)
	}
	type sent struct {
		MessageID string `json:"message_id"`
		Sequence  string `json:"sequence_number,omitempty"`
	}
	var ids []sent
	if *body != "-" {
		out, err := m.client.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &u, MessageBody: body,
			MessageGroupId: opt(*group), MessageDeduplicationId: opt(*dedup), DelaySeconds: int32(*delay), MessageAttributes: mattrs})
		if err != nil {
			return sqsclient.Err(*q, err)
		}
		ids = append(ids, sent{aws.ToString(out.MessageId), aws.ToString(out.SequenceNumber)})
	} else {
		sc := bufio.NewScanner(m.stdin)
		sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
		var entries []types.SendMessageBatchRequestEntry
		flush := func() error {
			if len(entries) == 0 {
				return nil
			}
			out, err := m.client.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &u, Entries: entries})
			if err != nil {
				return sqsclient.Err(*q, err)
			}
			if len(out.Failed) > 0 {
				f := out.Failed[0]
				return fmt.Errorf("queue %s: %d of %d messages not sent; first: %s: %s", *q, len(out.Failed), len(entries),
					aws.ToString(f.Code), aws.ToString(f.Message))
			}
			for _, s := range out.Successful {
				ids = append(ids, sent{aws.ToString(s.MessageId), aws.ToString(s.SequenceNumber)})
			}
			entries = entries[:0]
			return nil
		}
		for sc.Scan() {
			entries = append(entries, types.SendMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(len(entries))),
				MessageBody: aws.String(sc.Text()), MessageGroupId: opt(*group), DelaySeconds: int32(*delay), MessageAttributes: mattrs})
			if len(entries) == *batch {
				if err := flush(); err != nil {
					return err
				}
			}
		}
		if err := sc.Err(); err != nil {
			return err
		}
		if err := flush(); err != nil {
			return err
		}
	}
	return m.emit(map[string]any{"sent": orEmpty(ids)}, func(w io.Writer) {
		for _, s := range ids {
			fmt.Fprintln(w, s.MessageID)
		}
	})
}

// Message is a received message as `mq receive --output json` prints it.
type Message struct {
	MessageID     string            `json:"message_id"`
	ReceiptHandle string            `json:"receipt_handle"`
	Body          string            `json:"body"`
	Attributes    map[string]string `json:"attributes"`
	System        systemAttributes  `json:"system_attributes"`
}

type systemAttributes struct {
	SenderID                string `json:"sender_id,omitempty"`
	SentTimestamp           string `json:"sent_timestamp,omitempty"`
	ApproximateReceiveCount int    `json:"approximate_receive_count"`
	FirstReceiveTimestamp   string `json:"approximate_first_receive_timestamp,omitempty"`
	SequenceNumber          string `json:"sequence_number,omitempty"`
	MessageGroupID          string `json:"message_group_id,omitempty"`
	DeadLetterQueueSource   string `json:"dead_letter_queue_source_arn,omitempty"`
}

func toMessage(msg types.Message) Message {
	out := Message{MessageID: aws.ToString(msg.MessageId), ReceiptHandle: aws.ToString(msg.ReceiptHandle),
		Body: aws.ToString(msg.Body), Attributes: map[string]string{}}
	for k, v := range msg.MessageAttributes {
		out.Attributes[k] = aws.ToString(v.StringValue)
	}
	a := msg.Attributes
	ms := func(k string) string {
		n, err := strconv.ParseInt(a[k], 10, 64)
		if err != nil {
			return ""
		}
		return time.UnixMilli(n).UTC().Format(time.RFC3339Nano)
	}
	out.System = systemAttributes{SenderID: a["SenderId"], SentTimestamp: ms("SentTimestamp"),
		FirstReceiveTimestamp: ms("ApproximateFirstReceiveTimestamp"), SequenceNumber: a["SequenceNumber"],
		MessageGroupID: a["MessageGroupId"], DeadLetterQueueSource: a["DeadLetterQueueSourceArn"]}
	out.System.ApproximateReceiveCount, _ = strconv.Atoi(a["ApproximateReceiveCount"])
	return out
}

func (m *mq) receive(ctx context.Context, u string, max, wait, visibility int) ([]Message, error) {
	in := &sqs.ReceiveMessageInput{QueueUrl: &u, MaxNumberOfMessages: int32(max), WaitTimeSeconds: int32(wait),
		MessageSystemAttributeNames: []types.MessageSystemAttributeName{types.MessageSystemAttributeNameAll},
		MessageAttributeNames:       []string{"All"}}
	if visibility >= 0 {
		in.VisibilityTimeout = int32(visibility)
	}
	out, err := m.client.ReceiveMessage(ctx, in)
	if err != nil {
		return nil, sqsclient.Err(sqsclient.QueueName(u), err)
	}
	msgs := make([]Message, 0, len(out.Messages))
	var back []types.ChangeMessageVisibilityBatchRequestEntry
	for i, msg := range out.Messages {
		msgs = append(msgs, toMessage(msg))
		back = append(back, types.ChangeMessageVisibilityBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: msg.ReceiptHandle})
	}
	// The SDK omits a VisibilityTimeout of 0 (the queue's default applies), so
	// --visibility 0 is done as SQS consoles do it: receive, then give the messages back.
	if visibility == 0 && len(back) > 0 {
		res, err := m.client.ChangeMessageVisibilityBatch(ctx, &sqs.ChangeMessageVisibilityBatchInput{QueueUrl: &u, Entries: back})
		if err != nil {
			return nil, sqsclient.Err(sqsclient.QueueName(u), err)
		}
		if len(res.Failed) > 0 {
			return nil, fmt.Errorf("queue %s: %d messages not made visible again: %s", sqsclient.QueueName(u), len(res.Failed), aws.ToString(res.Failed[0].Code))
		}
	}
	return msgs, nil
}

func printMessages(w io.Writer, msgs []Message) {
	fmt.Fprintln(w, "MESSAGE ID\tRECEIVES\tRECEIPT HANDLE\tBODY")
	for _, msg := range msgs {
		body := msg.Body
		if len(body) > 60 {
			body = body[:57] + "..."
		}
		fmt.Fprintf(w, "%s\t%d\t%s\t%s\n", msg.MessageID, msg.System.ApproximateReceiveCount, msg.ReceiptHandle, strconv.Quote(body))
	}
}

func mqReceive(ctx context.Context, m *mq, fs *cli.Flags, args []string) error {
	q := fs.String("q", "", "`QUEUE` name or URL")
	max := fs.Int("m", 1, "at most `N` messages (1-10)")
	wait := fs.Int("w", 0, "long-poll up to `SECONDS` for a message (0-20)")
	visibility := fs.Int("visibility", -1, "hide the messages for `SECONDS` instead of the queue's timeout (0: leave them visible)")
	del := fs.Bool("delete", false, "delete the messages once printed (acknowledge them)")
	if err := m.parse(fs, args, "q"); err != nil {
		return err
	}
	if *max < 1 || *max > sqsrule.MaxReceiveMessages || *wait < 0 || *wait > sqsrule.MaxWaitTimeSeconds {
		return cli.Usagef("mq receive: -m wants 1 to %d and -w 0 to %d", sqsrule.MaxReceiveMessages, sqsrule.MaxWaitTimeSeconds)
	}
	if err := m.connect(ctx); err != nil {
		return err
	}
	u, err := m.queueURL(ctx, *q)
	if err != nil {
		return err
	}
	msgs, err := m.receive(ctx, u, *max, *wait, *visibility)
	if err != nil {
		return err
	}
	if err := m.emit(map[string]any{"messages": msgs}, func(w io.Writer) { printMessages(w, msgs) }); err != nil {
		return err
	}
	if *del && len(msgs) > 0 {
		handles := make([]string, len(msgs))
		for i, msg := range msgs {
			handles[i] = msg.ReceiptHandle
		}
		res, err := m.deleteBatch(ctx, u, handles)
		if err != nil {
			return err
		}
		if len(res.Failed) > 0 {
			return fmt.Errorf("queue %s: %d messages not deleted; first: %s", *q, len(res.Failed), res.Failed[0].Error)
		}
	}
	return nil
}

func mqVisibility(ctx context.Context, m *mq, fs *cli.Flags, args []string) error {
	q := fs.String("q", "", "`QUEUE` name or URL")
	handle := fs.String("r", "", "receipt `HANDLE` of a message received and still held")
	timeout := fs.String("t", "", "new visibility timeout in `SECONDS` from now (0 gives the message back)")
	if err := m.parse(fs, args, "q", "r", "t"); err != nil {
		return err
	}
	secs, err := strconv.Atoi(*timeout)
	if err != nil || secs < 0 || secs > sqsrule.MaxVisibilityTimeout {
		return cli.Usagef("mq visibility: -t %q: want 0 to %d seconds", *timeout, sqsrule.MaxVisibilityTimeout)
	}
	if err := m.connect(ctx); err != nil {
		return err
	}
	u, err := m.queueURL(ctx, *q)
	if err != nil {
		return err
	}
	if _, err := m.client.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &u,
		ReceiptHandle: handle, VisibilityTimeout: int32(secs)}); err != nil {
		return sqsclient.Err(*q, err)
	}
	return m.emit(map[string]any{"visibility_timeout": secs}, func(w io.Writer) {
		fmt.Fprintf(w, "visible again in %d s\n", secs)
	})
}

// BatchResult is what `mq delete-batch --output json` prints.
type BatchResult struct {
	Successful []string      `json:"successful"`
	Failed     []BatchFailed `json:"failed"`
}

// BatchFailed is an entry of a batch that failed.
type BatchFailed struct {
	ReceiptHandle string `json:"receipt_handle"`
	Code          string `json:"code"`
	Error         string `json:"error"`
}

// deleteBatch deletes handles in batches of ten, collecting per-handle outcomes.
func (m *mq) deleteBatch(ctx context.Context, u string, handles []string) (BatchResult, error) {
	res := BatchResult{Successful: []string{}, Failed: []BatchFailed{}}
	for len(handles) > 0 {
		n := min(sqsrule.MaxBatchEntries, len(handles))
		chunk := handles[:n]
		handles = handles[n:]
		entries := make([]types.DeleteMessageBatchRequestEntry, n)
		for i, h := range chunk {
			entries[i] = types.DeleteMessageBatchRequestEntry{Id: aws.String(strconv.Itoa(i)), ReceiptHandle: aws.String(h)}
		}
		out, err := m.client.DeleteMessageBatch(ctx, &sqs.DeleteMessageBatchInput{QueueUrl: &u, Entries: entries})
		if err != nil {
			return res, sqsclient.Err(sqsclient.QueueName(u), err)
		}
		for _, s := range out.Successful {
			i, _ := strconv.Atoi(aws.ToString(s.Id))
			res.Successful = append(res.Successful, chunk[i])
		}
		for _, f := range out.Failed {
			i, _ := strconv.Atoi(aws.ToString(f.Id))
			res.Failed = append(res.Failed, BatchFailed{chunk[i], aws.ToString(f.Code),
				aws.ToString(f.Code) + ": " + aws.ToString(f.Message)})
		}
	}
	return res, nil
}

func mqDeleteBatch(ctx context.Context, m *mq, fs *cli.Flags, args []string) error {
	q := fs.String("q", "", "`QUEUE` name or URL")
	var handles []string
	fs.Func("r", "receipt `HANDLES`, comma-separated, repeatable; - reads one per line of stdin", func(s string) error {
		if s == "-" {
			sc := bufio.NewScanner(m.stdin)
			for sc.Scan() {
				if h := strings.TrimSpace(sc.Text()); h != "" {
					handles = append(handles, h)
				}
			}
			return sc.Err()
		}
		for _, h := range strings.Split(s, ",") {
			if h = strings.TrimSpace(h); h != "" {
				handles = append(handles, h)
			}
		}
		return nil
	})
	if err := m.parse(fs, args, "q"); err != nil {
		return err
	}
	if len(handles) == 0 {
		return cli.Usagef("mq delete-batch: -r is required (see anysqs mq delete-batch --help)")
	}
	if err := m.connect(ctx); err != nil {
		return err
	}
	u, err := m.queueURL(ctx, *q)
	if err != nil {
		return err
	}
	res, err := m.deleteBatch(ctx, u, handles)
	if err != nil {
		return err
	}
	if err := m.emit(res, func(w io.Writer) {
		for _, h := range res.Successful {
			fmt.Fprintf(w, "deleted\t%s\n", h)
		}
		for _, f := range res.Failed {
			fmt.Fprintf(w, "FAILED\t%s\t%s\n", f.ReceiptHandle, f.Error)
		}
	}); err != nil {
		return err
	}
	if len(res.Failed) > 0 {
		return fmt.Errorf("queue %s: %d of %d receipt handles not deleted", *q, len(res.Failed), len(handles))
	}
	return nil
}

// redrivePolicy reads a queue's RedrivePolicy: its DLQ's ARN, or "" when it has none.
func (m *mq) redrivePolicy(ctx context.Context, u string) (arn string, maxReceives int, err error) {
	a, err := m.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &u,
		AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameRedrivePolicy}})
	if err != nil {
		return "", 0, sqsclient.Err(sqsclient.QueueName(u), err)
	}
	raw := a.Attributes["RedrivePolicy"]
	if raw == "" {
		return "", 0, nil
	}
	var p struct {
		Target string `json:"deadLetterTargetArn"`
		Max    any    `json:"maxReceiveCount"` // SQS writes it as a string or a number
	}
	if err := json.Unmarshal([]byte(raw), &p); err != nil {
		return "", 0, fmt.Errorf("queue %s: RedrivePolicy %q: %w", sqsclient.QueueName(u), raw, err)
	}
	maxReceives, _ = strconv.Atoi(fmt.Sprint(p.Max))
	return p.Target, maxReceives, nil
}

// arnToURL finds the URL of the queue an ARN names (arn:aws:sqs:REGION:ACCOUNT:NAME).
func (m *mq) arnToURL(ctx context.Context, arn string) (string, error) {
	parts := strings.Split(arn, ":")
	if len(parts) != 6 {
		return "", fmt.Errorf("%q is not a queue ARN", arn)
	}
	out, err := m.client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(parts[5]), QueueOwnerAWSAccountId: aws.String(parts[4])})
	if err != nil {
		return "", sqsclient.Err(parts[5], err)
	}
	return aws.ToString(out.QueueUrl), nil
}

func mqDLQ(ctx context.Context, m *mq, fs *cli.Flags, args []string) error {
	q := fs.String("q", "", "`SOURCE` queue (the one with the RedrivePolicy), name or URL")
	sample := fs.Int("sample", 5, "show up to `N` messages (0-10); each is received with visibility 0, which counts as a receive")
	if err := m.parse(fs, args, "q"); err != nil {
		return err
	}
	if *sample < 0 || *sample > sqsrule.MaxReceiveMessages {
		return cli.Usagef("mq dlq: --sample wants 0 to %d", sqsrule.MaxReceiveMessages)
	}
	if err := m.connect(ctx); err != nil {
		return err
	}
	u, err := m.queueURL(ctx, *q)
	if err != nil {
		return err
	}
	arn, maxReceives, err := m.redrivePolicy(ctx, u)
	if err != nil {
		return err
	}
	if arn == "" {
		return fmt.Errorf("queue %s: no dead-letter queue configured (no RedrivePolicy); give the source queue, not the DLQ", *q)
	}
	dlqURL, err := m.arnToURL(ctx, arn)
	if err != nil {
		return err
	}
	a, err := m.client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &dlqURL, AttributeNames: countAttrs})
	if err != nil {
		return sqsclient.Err(sqsclient.QueueName(dlqURL), err)
	}
	depth, _ := strconv.Atoi(a.Attributes[string(countAttrs[0])])
	inFlight, _ := strconv.Atoi(a.Attributes[string(countAttrs[1])])
	msgs := []Message{}
	if *sample > 0 && depth > 0 {
		if msgs, err = m.receive(ctx, dlqURL, *sample, 0, 0); err != nil {
			return err
		}
	}
	report := map[string]any{"source_queue": sqsclient.QueueName(u), "dlq_name": sqsclient.QueueName(dlqURL), "dlq_url": dlqURL,
		"max_receive_count": maxReceives, "approximate_message_count": depth, "in_flight": inFlight, "sample_messages": msgs}
	return m.emit(report, func(w io.Writer) {
		fmt.Fprintf(w, "source queue\t%s\ndead-letter queue\t%s\nmax receives\t%d\nmessages\t%d visible, %d in flight\n\n",
			sqsclient.QueueName(u), dlqURL, maxReceives, depth, inFlight)
		if len(msgs) > 0 {
			printMessages(w, msgs)
		}
	})
}

func mqRedrive(ctx context.Context, m *mq, fs *cli.Flags, args []string) error {
	q := fs.String("q", "", "`QUEUE`: a source queue (its DLQ is redriven back to it) or a DLQ (back to each message's source)")
	to := fs.String("to", "", "move to this `QUEUE` instead")
	rate := fs.Int("rate", 0, "at most `N` messages per second (default: the service's)")
	noWait := fs.Bool("no-wait", false, "start the move task and return")
	if err := m.parse(fs, args, "q"); err != nil {
		return err
	}
	if err := m.connect(ctx); err != nil {
		return err
	}
	u, err := m.queueURL(ctx, *q)
	if err != nil {
		return err
	}
	dlqARN, _, err := m.redrivePolicy(ctx, u)
	if err != nil {
		return err
	}
	var destARN string
	if dlqARN != "" { // -q is the source: its DLQ goes back to it
		if destARN, err = m.queueARN(ctx, u); err != nil {
			return err
		}
	} else if dlqARN, err = m.queueARN(ctx, u); err != nil { // -q is the DLQ itself
		return err
	}
	if *to != "" {
		tu, err := m.queueURL(ctx, *to)
		if err != nil {
			return err
		}
		if destARN, err = m.queueARN(ctx, tu); err != nil {
			return err
		}
	}
	in := &sqs.StartMessageMoveTaskInput{SourceArn: &dlqARN}
	if destARN != "" {
		in.DestinationArn = &destARN
	}
	if *rate > 0 {
		in.MaxNumberOfMessagesPerSecond = aws.Int32(int32(*rate))
	}
	start, err := m.client.StartMessageMoveTask(ctx, in)
	if err != nil {
		return sqsclient.Err(sqsclient.ARNName(dlqARN), err)
	}
	handle := aws.ToString(start.TaskHandle)
	progress := func(t types.ListMessageMoveTasksResultEntry) {
		if m.output == "table" {
			fmt.Fprintf(m.stdout, "%s: %d of %d moved\n", aws.ToString(t.Status), t.ApproximateNumberOfMessagesMoved,
				aws.ToInt64(t.ApproximateNumberOfMessagesToMove))
		}
	}
	if *noWait {
		return m.emit(map[string]string{"task_handle": handle, "source": dlqARN}, func(w io.Writer) {
			fmt.Fprintln(w, "started move task", handle)
		})
	}
	// The service reports progress on ListMessageMoveTasks only: poll it once a second.
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		out, err := m.client.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: &dlqARN, MaxResults: aws.Int32(1)})
		if err != nil {
			return sqsclient.Err(sqsclient.ARNName(dlqARN), err)
		}
		if len(out.Results) == 0 {
			return fmt.Errorf("queue %s: the move task %s is not listed", sqsclient.ARNName(dlqARN), handle)
		}
		t := out.Results[0]
		progress(t)
		switch aws.ToString(t.Status) {
		case "COMPLETED":
			return m.emitRedrive(t, dlqARN, destARN)
		case "FAILED", "CANCELLED":
			return fmt.Errorf("queue %s: move task %s: %s", sqsclient.ARNName(dlqARN), aws.ToString(t.Status), aws.ToString(t.FailureReason))
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-tick.C:
		}
	}
}

func (m *mq) emitRedrive(t types.ListMessageMoveTasksResultEntry, src, dest string) error {
	destName := "each message's source queue"
	if dest != "" {
		destName = sqsclient.ARNName(dest)
	}
	return m.emit(map[string]any{"messages_redriven": t.ApproximateNumberOfMessagesMoved, "source_queue": sqsclient.ARNName(src),
		"destination_queue": destName}, func(w io.Writer) {
		fmt.Fprintf(w, "moved %d messages from %s to %s\n", t.ApproximateNumberOfMessagesMoved, sqsclient.ARNName(src), destName)
	})
}
