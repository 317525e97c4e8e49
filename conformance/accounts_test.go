package conformance

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/schemas"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
	"github.com/aws/smithy-go/transport/http/protocol/awsquery"

	"github.com/anysqs/anysqs/gateway"
)

// Two accounts on one gateway, each with its own access key; the gateway's default
// account (testAccount) has a third.
const (
	accountA, keyA, secretA = "111111111111", "AKIDACCOUNTA", "secret-a"
	accountB, keyB, secretB = "222222222222", "AKIDACCOUNTB", "secret-b"
)

// accountsGateway is one gateway over backend b serving the two accounts and the default
// one; it returns the gateway's URL and the context of the test.
func accountsGateway(t *testing.T, b backend) (string, context.Context) {
	t.Helper()
	url, _, ctx := accountsGatewayOver(t, b, false)
	return url, ctx
}

// accountsGatewayOver is accountsGateway, over HTTPS when tls is set; it returns the
// HTTP client that trusts the gateway's certificate as well.
func accountsGatewayOver(t *testing.T, b backend, tls bool) (string, *http.Client, context.Context) {
	t.Helper()
	st := b.prepare(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := st.open(ctx)
	if err != nil {
		t.Fatalf("open %s: %v", b.name, err)
	}
	t.Cleanup(func() { d.Close() })
	srv := httptest.NewUnstartedServer(nil)
	scheme := "http://"
	if tls {
		scheme = "https://"
	}
	gw, err := gateway.New(ctx, gateway.Config{
		Driver: d, AccountID: testAccount, Region: testRegion, PublicURL: scheme + srv.Listener.Addr().String(),
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Credentials: map[string]string{testAccessKey: testSecretKey, keyA: secretA, keyB: secretB},
		Accounts:    map[string]string{keyA: accountA, keyB: accountB},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	srv.Config.Handler = gw
	if tls {
		srv.StartTLS()
	} else {
		srv.Start()
	}
	t.Cleanup(srv.Close)
	return srv.URL, srv.Client(), ctx
}

func accountClient(url, key, secret string) *sqs.Client {
	return accountClientOver(url, key, secret, protocolJSON, nil)
}

// accountClientOver is accountClient speaking protocol p through hc (nil: the default).
func accountClientOver(url, key, secret string, p wireProtocol, hc *http.Client) *sqs.Client {
	return sqs.New(sqs.Options{
		Region: testRegion, BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{},
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""),
	}, func(o *sqs.Options) {
		if hc != nil {
			o.HTTPClient = hc
		}
		if p == protocolQuery {
			o.Protocol = awsquery.New(schemas.AmazonSQS)
		}
	})
}

// TestAccountsSDK: through aws-sdk-go-v2 (JSON), on SQLite and PostgreSQL, neither of two
// accounts can list, read, change, send to, receive from, purge, tag or delete the
// other's queues, nor use the other's receipt handles, though both have a queue of the
// same name; AddPermission grants exactly the action it names, RemovePermission takes
// it back, an explicit Deny wins, and a policy with an unknown condition operator is
// refused.
func TestAccountsSDK(t *testing.T) {
	t.Parallel()
	for _, b := range []backend{sqliteBackend(), postgresBackend()} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			takeCPUSlot(t)
			url, ctx := accountsGateway(t, b)
			a, bb := accountClient(url, keyA, secretA), accountClient(url, keyB, secretB)
			def := accountClient(url, testAccessKey, testSecretKey)
			must := func(err error, what string) {
				t.Helper()
				if err != nil {
					t.Fatalf("%s: %v", what, err)
				}
			}
			create := func(c *sqs.Client, name string) string {
				t.Helper()
				out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Tags: map[string]string{"team": "x"}})
				must(err, "CreateQueue "+name)
				return *out.QueueUrl
			}
			aURL, bURL, defURL := create(a, "shared"), create(bb, "shared"), create(def, "shared")
			for url, acct := range map[string]string{aURL: accountA, bURL: accountB, defURL: testAccount} {
				if !strings.HasSuffix(url, "/"+acct+"/shared") {
					t.Fatalf("queue URL %s does not carry account %s", url, acct)
				}
			}
			attrs, err := a.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &aURL, AttributeNames: []types.QueueAttributeName{"QueueArn"}})
			must(err, "A GetQueueAttributes")
			aARN := attrs.Attributes["QueueArn"]
			if aARN != "arn:aws:sqs:"+testRegion+":"+accountA+":shared" {
				t.Fatalf("QueueArn = %s", aARN)
			}
			for c, want := range map[*sqs.Client]string{a: aURL, bb: bURL, def: defURL} {
				l, err := c.ListQueues(ctx, &sqs.ListQueuesInput{})
				must(err, "ListQueues")
				if len(l.QueueUrls) != 1 || l.QueueUrls[0] != want {
					t.Fatalf("ListQueues = %v, want only %s", l.QueueUrls, want)
				}
			}

			// A message of A's, received by A: its handle is A's.
			_, err = a.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &aURL, MessageBody: aws.String("of A")})
			must(err, "A SendMessage")
			rcv, err := a.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &aURL, VisibilityTimeout: 600})
			must(err, "A ReceiveMessage")
			if len(rcv.Messages) != 1 {
				t.Fatalf("A received %d messages", len(rcv.Messages))
			}
			handle := rcv.Messages[0].ReceiptHandle
			_, err = a.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &aURL, MessageBody: aws.String("of A, visible")})
			must(err, "A SendMessage")

			// B on A's queue, by its URL, by a URL with another host, and by A's ARN.
			other := strings.Replace(aURL, "127.0.0.1", "localhost", 1)
			denied := func(what string, err error) {
				t.Helper()
				if codeOf(err) != "AccessDenied" {
					t.Errorf("B %s on A's queue: %v, want AccessDenied", what, err)
				}
			}
			for _, u := range []string{aURL, other} {
				u := u
				_, err = bb.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &u, AttributeNames: []types.QueueAttributeName{"All"}})
				denied("GetQueueAttributes", err)
				_, err = bb.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &u, Attributes: map[string]string{"Policy": `{"Statement":[{"Effect":"Allow","Principal":"*","Action":"sqs:*","Resource":"*"}]}`}})
				denied("SetQueueAttributes", err)
				_, err = bb.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &u, MessageBody: aws.String("from B")})
				denied("SendMessage", err)
				_, err = bb.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &u, Entries: []types.SendMessageBatchRequestEntry{{Id: aws.String("1"), MessageBody: aws.String("from B")}}})
				denied("SendMessageBatch", err)
				_, err = bb.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &u})
				denied("ReceiveMessage", err)
				_, err = bb.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &u, ReceiptHandle: handle})
				denied("DeleteMessage", err)
				_, err = bb.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &u, ReceiptHandle: handle, VisibilityTimeout: 0})
				denied("ChangeMessageVisibility", err)
				_, err = bb.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &u})
				denied("PurgeQueue", err)
				_, err = bb.TagQueue(ctx, &sqs.TagQueueInput{QueueUrl: &u, Tags: map[string]string{"team": "b"}})
				denied("TagQueue", err)
				_, err = bb.UntagQueue(ctx, &sqs.UntagQueueInput{QueueUrl: &u, TagKeys: []string{"team"}})
				denied("UntagQueue", err)
				_, err = bb.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: &u})
				denied("ListQueueTags", err)
				_, err = bb.ListDeadLetterSourceQueues(ctx, &sqs.ListDeadLetterSourceQueuesInput{QueueUrl: &u})
				denied("ListDeadLetterSourceQueues", err)
				_, err = bb.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: &u, Label: aws.String("grab"), AWSAccountIds: []string{accountB}, Actions: []string{"*"}})
				denied("AddPermission", err)
				_, err = bb.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &u})
				denied("DeleteQueue", err)
			}
			_, err = bb.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String("shared"), QueueOwnerAWSAccountId: aws.String(accountA)})
			denied("GetQueueUrl", err)
			_, err = bb.ListMessageMoveTasks(ctx, &sqs.ListMessageMoveTasksInput{SourceArn: &aARN})
			denied("ListMessageMoveTasks", err)
			_, err = bb.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url + "/" + accountA + "/missing")})
			denied("GetQueueAttributes of a queue that does not exist", err)

			// The stored name of A's queue is no name at all, for anyone.
			for _, c := range []*sqs.Client{def, bb} {
				_, err = c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(accountA + "..shared")})
				if !codeIs(err, "QueueDoesNotExist") {
					t.Errorf("A's stored name as a bare queue name: %v, want QueueDoesNotExist", err)
				}
				_, err = c.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(accountA + "..shared")})
				if !codeIs(err, "QueueDoesNotExist") {
					t.Errorf("GetQueueUrl of A's stored name: %v, want QueueDoesNotExist", err)
				}
				l, err := c.ListQueues(ctx, &sqs.ListQueuesInput{QueueNamePrefix: aws.String(accountA)})
				must(err, "ListQueues by A's stored prefix")
				if len(l.QueueUrls) != 0 {
					t.Errorf("ListQueues by A's stored prefix: %v", l.QueueUrls)
				}
			}

			// A's handle on B's queue of the same name deletes nothing of A's.
			_, err = bb.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &bURL, MessageBody: aws.String("of B")})
			must(err, "B SendMessage")
			_, err = bb.DeleteMessage(ctx, &sqs.DeleteMessageInput{QueueUrl: &bURL, ReceiptHandle: handle})
			if err == nil {
				t.Errorf("B deleted with A's receipt handle on its own queue")
			}
			_, err = bb.ChangeMessageVisibility(ctx, &sqs.ChangeMessageVisibilityInput{QueueUrl: &bURL, ReceiptHandle: handle, VisibilityTimeout: 0})
			if err == nil {
				t.Errorf("B changed visibility with A's receipt handle on its own queue")
			}
			wantCounts := func(c *sqs.Client, u, visible, inFlight, who string) {
				t.Helper()
				out, err := c.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &u,
					AttributeNames: []types.QueueAttributeName{"ApproximateNumberOfMessages", "ApproximateNumberOfMessagesNotVisible"}})
				must(err, "GetQueueAttributes")
				if v, f := out.Attributes["ApproximateNumberOfMessages"], out.Attributes["ApproximateNumberOfMessagesNotVisible"]; v != visible || f != inFlight {
					t.Fatalf("%s: %s visible, %s in flight; want %s, %s", who, v, f, visible, inFlight)
				}
			}
			wantCounts(a, aURL, "1", "1", "A's queue after B's attempts")
			wantCounts(bb, bURL, "1", "0", "B's queue")
			tags, err := a.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: &aURL})
			must(err, "A ListQueueTags")
			if tags.Tags["team"] != "x" {
				t.Fatalf("A's tags changed: %v", tags.Tags)
			}

			// AddPermission: B may send, and only send.
			_, err = a.AddPermission(ctx, &sqs.AddPermissionInput{QueueUrl: &aURL, Label: aws.String("b-send"), AWSAccountIds: []string{accountB}, Actions: []string{"SendMessage"}})
			must(err, "A AddPermission")
			_, err = bb.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &aURL, MessageBody: aws.String("granted")})
			must(err, "B SendMessage after AddPermission")
			_, err = bb.SendMessageBatch(ctx, &sqs.SendMessageBatchInput{QueueUrl: &aURL, Entries: []types.SendMessageBatchRequestEntry{{Id: aws.String("1"), MessageBody: aws.String("granted too")}}})
			must(err, "B SendMessageBatch after AddPermission (authorized as SendMessage)")
			_, err = bb.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &aURL})
			denied("ReceiveMessage after a SendMessage grant", err)
			_, err = bb.PurgeQueue(ctx, &sqs.PurgeQueueInput{QueueUrl: &aURL})
			denied("PurgeQueue after a SendMessage grant", err)
			_, err = bb.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &aURL})
			denied("GetQueueAttributes after a SendMessage grant", err)
			_, err = def.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &aURL, MessageBody: aws.String("not granted")})
			if codeOf(err) != "AccessDenied" {
				t.Errorf("the default account sent to A's queue granted to B only: %v", err)
			}
			wantCounts(a, aURL, "3", "1", "A's queue after B's granted sends")
			rm, err := a.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &aURL, MaxNumberOfMessages: 10, MessageSystemAttributeNames: []types.MessageSystemAttributeName{"SenderId"}})
			must(err, "A ReceiveMessage")
			senders := map[string]int{}
			for _, m := range rm.Messages {
				senders[m.Attributes["SenderId"]]++
			}
			if senders[accountB] != 2 || senders[accountA] != 1 {
				t.Errorf("SenderId of A's messages: %v, want 2 of %s and 1 of %s", senders, accountB, accountA)
			}
			_, err = a.RemovePermission(ctx, &sqs.RemovePermissionInput{QueueUrl: &aURL, Label: aws.String("b-send")})
			must(err, "A RemovePermission")
			_, err = bb.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &aURL, MessageBody: aws.String("revoked")})
			denied("SendMessage after RemovePermission", err)

			// A policy: everyone may do anything, but B may not receive. Deny wins.
			_, err = a.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &aURL, Attributes: map[string]string{"Policy": `{"Version":"2012-10-17","Statement":[` +
				`{"Effect":"Allow","Principal":"*","Action":"sqs:*","Resource":"` + aARN + `"},` +
				`{"Effect":"Deny","Principal":{"AWS":"arn:aws:iam::` + accountB + `:root"},"Action":"sqs:Receive*","Resource":"*"}]}`}})
			must(err, "A SetQueueAttributes Policy")
			_, err = bb.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &aURL})
			denied("ReceiveMessage under an explicit Deny", err)
			_, err = bb.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: &aURL})
			must(err, "B ListQueueTags under Allow *")
			if _, err = def.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: &aURL}); err != nil {
				t.Errorf("the default account under Allow *: %v", err)
			}
			// A condition the gateway cannot evaluate is refused, never ignored.
			_, err = a.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &aURL, Attributes: map[string]string{"Policy": `{"Statement":[` +
				`{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Resource":"*","Condition":{"ArnEqualz":{"aws:SourceArn":"arn:aws:sns:us-east-1:111111111111:t"}}}]}`}})
			if codeOf(err) != "InvalidAttributeValue" {
				t.Errorf("a policy with an unknown condition operator: %v, want InvalidAttributeValue", err)
			}
			// A may delete its own queue; B's queue of the same name stays.
			_, err = a.DeleteQueue(ctx, &sqs.DeleteQueueInput{QueueUrl: &aURL})
			must(err, "A DeleteQueue")
			wantCounts(bb, bURL, "1", "0", "B's queue after A deleted its own")
		})
	}
}

// TestAccountsAWSCLI: the same separation through the AWS CLI (Query protocol), on SQLite
// and PostgreSQL.
func TestAccountsAWSCLI(t *testing.T) {
	t.Parallel()
	for _, b := range []backend{sqliteBackend(), postgresBackend()} {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			takeCPUSlot(t)
			url, ctx := accountsGateway(t, b)
			h := &H{T: t, Ctx: ctx, URL: url}
			as := func(key, secret string) *cli {
				c := newCLI(t, h)
				c.env = append(c.env, "AWS_ACCESS_KEY_ID="+key, "AWS_SECRET_ACCESS_KEY="+secret)
				return c
			}
			a, bb := as(keyA, secretA), as(keyB, secretB)
			var created struct{ QueueUrl string }
			a.ok(&created, "create-queue", "--queue-name", "shared")
			aURL := created.QueueUrl
			bb.ok(&created, "create-queue", "--queue-name", "shared")
			bURL := created.QueueUrl
			if aURL == bURL || !strings.Contains(aURL, "/"+accountA+"/") || !strings.Contains(bURL, "/"+accountB+"/") {
				t.Fatalf("queue URLs %s and %s", aURL, bURL)
			}
			var listed struct{ QueueUrls []string }
			bb.ok(&listed, "list-queues")
			if len(listed.QueueUrls) != 1 || listed.QueueUrls[0] != bURL {
				t.Fatalf("B list-queues = %v, want [%s]", listed.QueueUrls, bURL)
			}
			a.ok(nil, "send-message", "--queue-url", aURL, "--message-body", "of A")
			var recv struct {
				Messages []struct{ ReceiptHandle string }
			}
			a.ok(&recv, "receive-message", "--queue-url", aURL, "--visibility-timeout", "600")
			if len(recv.Messages) != 1 {
				t.Fatalf("A received %d messages", len(recv.Messages))
			}
			handle := recv.Messages[0].ReceiptHandle
			denied := func(args ...string) {
				t.Helper()
				_, stderr, code := bb.run(args...)
				if code == 0 || !strings.Contains(stderr, "(AccessDenied)") {
					t.Errorf("B aws sqs %s: exit %d, %s; want AccessDenied", args[0], code, stderr)
				}
			}
			denied("send-message", "--queue-url", aURL, "--message-body", "from B")
			denied("receive-message", "--queue-url", aURL)
			denied("get-queue-attributes", "--queue-url", aURL, "--attribute-names", "All")
			denied("delete-message", "--queue-url", aURL, "--receipt-handle", handle)
			denied("change-message-visibility", "--queue-url", aURL, "--receipt-handle", handle, "--visibility-timeout", "0")
			denied("purge-queue", "--queue-url", aURL)
			denied("tag-queue", "--queue-url", aURL, "--tags", "team=b")
			denied("list-queue-tags", "--queue-url", aURL)
			denied("delete-queue", "--queue-url", aURL)
			denied("get-queue-url", "--queue-name", "shared", "--queue-owner-aws-account-id", accountA)
			if _, _, code := bb.run("delete-message", "--queue-url", bURL, "--receipt-handle", handle); code == 0 {
				t.Errorf("B deleted with A's receipt handle on its own queue")
			}
			var counts struct{ Attributes map[string]string }
			a.ok(&counts, "get-queue-attributes", "--queue-url", aURL, "--attribute-names", "ApproximateNumberOfMessagesNotVisible")
			if counts.Attributes["ApproximateNumberOfMessagesNotVisible"] != "1" {
				t.Fatalf("A's message after B's attempts: %v", counts.Attributes)
			}

			a.ok(nil, "add-permission", "--queue-url", aURL, "--label", "b-send", "--aws-account-ids", accountB, "--actions", "SendMessage")
			bb.ok(nil, "send-message", "--queue-url", aURL, "--message-body", "granted")
			denied("receive-message", "--queue-url", aURL)
			denied("purge-queue", "--queue-url", aURL)
			a.ok(nil, "remove-permission", "--queue-url", aURL, "--label", "b-send")
			denied("send-message", "--queue-url", aURL, "--message-body", "revoked")
			a.ok(&counts, "get-queue-attributes", "--queue-url", aURL, "--attribute-names", "ApproximateNumberOfMessages")
			if counts.Attributes["ApproximateNumberOfMessages"] != "1" {
				t.Fatalf("A's queue holds %s visible messages, want the 1 B was granted to send", counts.Attributes["ApproximateNumberOfMessages"])
			}
		})
	}
}

// TestQueuePolicyConditions: queue policy conditions are evaluated as IAM evaluates them,
// in both wire protocols (aws-sdk-go-v2 speaking JSON and Query). Policies are the
// gateway's, not the backend's, so one backend (SQLite) is enough. Account A owns the
// queue; B calls it directly over plain HTTP from 127.0.0.1:
//
//   - an SNS subscription grant (ArnLike on aws:SourceArn) is accepted and stored as
//     written, and grants B nothing: a direct call has no aws:SourceArn;
//   - a Deny "unless from SNS" (ArnNotLike on aws:SourceArn) denies B, since a negated
//     operator holds on an absent key; ArnLikeIfExists holds on it too;
//   - aws:SourceIp 127.0.0.1/32 allows B and 10.0.0.0/8 does not;
//   - a Deny on aws:SecureTransport false denies B over HTTP and not over HTTPS;
//   - an unknown operator is refused with InvalidAttributeValue and the reason, by
//     SetQueueAttributes (the stored policy unchanged) and by CreateQueue;
//   - an empty Policy removes the policy.
func TestQueuePolicyConditions(t *testing.T) {
	t.Parallel()
	for _, p := range []struct {
		name  string
		proto wireProtocol
	}{{"json", protocolJSON}, {"query", protocolQuery}} {
		t.Run(p.name, func(t *testing.T) {
			t.Parallel()
			takeCPUSlot(t)
			url, _, ctx := accountsGatewayOver(t, sqliteBackend(), false)
			a := accountClientOver(url, keyA, secretA, p.proto, nil)
			bb := accountClientOver(url, keyB, secretB, p.proto, nil)
			out, err := a.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("conditions")})
			if err != nil {
				t.Fatalf("A CreateQueue: %v", err)
			}
			qURL := *out.QueueUrl
			arn := "arn:aws:sqs:" + testRegion + ":" + accountA + ":conditions"
			setPolicy := func(doc string) error {
				_, err := a.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: &qURL, Attributes: map[string]string{"Policy": doc}})
				return err
			}
			mustSet := func(doc, what string) {
				t.Helper()
				if err := setPolicy(doc); err != nil {
					t.Fatalf("A sets %s: %v", what, err)
				}
			}
			storedPolicy := func() (string, bool) {
				t.Helper()
				out, err := a.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &qURL, AttributeNames: []types.QueueAttributeName{"All"}})
				if err != nil {
					t.Fatalf("A GetQueueAttributes: %v", err)
				}
				v, ok := out.Attributes["Policy"]
				return v, ok
			}
			bSends := func(want bool, what string) {
				t.Helper()
				_, err := bb.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &qURL, MessageBody: aws.String(what)})
				switch {
				case want && err != nil:
					t.Errorf("B SendMessage %s: %v, want it allowed", what, err)
				case !want && codeOf(err) != "AccessDenied":
					t.Errorf("B SendMessage %s: %v, want AccessDenied", what, err)
				}
			}
			doc := func(stmts ...string) string {
				return `{"Version":"2012-10-17","Statement":[` + strings.Join(stmts, ",") + `]}`
			}
			allowB := `{"Effect":"Allow","Principal":{"AWS":"` + accountB + `"},"Action":"sqs:*","Resource":"` + arn + `"}`

			// The SNS subscription grant Terraform and the SNS console write.
			snsGrant := doc(`{"Sid":"topic","Effect":"Allow","Principal":{"AWS":"*"},"Action":"SQS:SendMessage","Resource":"` + arn + `",` +
				`"Condition":{"ArnLike":{"aws:SourceArn":"arn:aws:sns:` + testRegion + `:` + accountA + `:orders-*"}}}`)
			mustSet(snsGrant, "an SNS subscription grant")
			if got, _ := storedPolicy(); got != snsGrant {
				t.Errorf("stored Policy = %s, want it as set", got)
			}
			bSends(false, "under an SNS-only grant (no aws:SourceArn on a direct call)")

			mustSet(doc(allowB, `{"Effect":"Deny","Principal":"*","Action":"sqs:SendMessage","Resource":"*",`+
				`"Condition":{"ArnNotLike":{"aws:SourceArn":"arn:aws:sns:*:*:*"}}}`), "a Deny unless from SNS")
			bSends(false, "under a Deny unless from SNS (ArnNotLike holds on an absent key)")
			if _, err := bb.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{QueueUrl: &qURL}); err != nil {
				t.Errorf("B GetQueueAttributes, which the Deny does not name: %v", err)
			}
			mustSet(doc(`{"Effect":"Allow","Principal":{"AWS":"`+accountB+`"},"Action":"sqs:SendMessage","Resource":"*",`+
				`"Condition":{"ArnLikeIfExists":{"aws:SourceArn":"arn:aws:sns:*:*:*"}}}`), "an ArnLikeIfExists grant")
			bSends(true, "under ArnLikeIfExists (holds on an absent key)")

			// aws:SourceIp is the connection's peer.
			ipGrant := func(cidr string) string {
				return doc(`{"Effect":"Allow","Principal":{"AWS":"` + accountB + `"},"Action":"sqs:SendMessage","Resource":"*",` +
					`"Condition":{"IpAddress":{"aws:SourceIp":"` + cidr + `"}}}`)
			}
			mustSet(ipGrant("127.0.0.1/32"), "a grant to 127.0.0.1/32")
			bSends(true, "from 127.0.0.1 under a grant to 127.0.0.1/32")
			mustSet(ipGrant("10.0.0.0/8"), "a grant to 10.0.0.0/8")
			bSends(false, "from 127.0.0.1 under a grant to 10.0.0.0/8")
			mustSet(doc(allowB, `{"Effect":"Deny","Principal":"*","Action":"*","Resource":"*","Condition":{"NotIpAddress":{"aws:SourceIp":["10.0.0.0/8","127.0.0.0/8"]}}}`),
				"a Deny outside 10.0.0.0/8 and 127.0.0.0/8")
			bSends(true, "from 127.0.0.1 under a Deny of other networks")

			// aws:SecureTransport: this gateway serves plain HTTP.
			tlsOnly := doc(allowB, `{"Effect":"Deny","Principal":"*","Action":"*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}`)
			mustSet(tlsOnly, "a Deny without TLS")
			bSends(false, "over HTTP under a Deny without TLS")
			if _, err := a.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: &qURL, MessageBody: aws.String("owner")}); err != nil {
				t.Errorf("A, the owner, under its own queue's Deny (the owner is always allowed): %v", err)
			}

			// What cannot be evaluated is refused, and the stored policy stays.
			unknown := doc(allowB, `{"Effect":"Deny","Principal":"*","Action":"*","Resource":"*","Condition":{"StringEqualz":{"aws:SourceIp":"10.0.0.1"}}}`)
			const reason = "Invalid value for the parameter Policy. Reason: statement 2: the condition operator StringEqualz is not an IAM condition operator, so the condition cannot be evaluated"
			wantRefused := func(err error, what string) {
				t.Helper()
				var ae smithy.APIError
				if !errors.As(err, &ae) || ae.ErrorCode() != "InvalidAttributeValue" || ae.ErrorMessage() != reason {
					t.Errorf("%s: %v, want InvalidAttributeValue: %s", what, err, reason)
				}
			}
			wantRefused(setPolicy(unknown), "SetQueueAttributes with an unknown operator")
			if got, _ := storedPolicy(); got != tlsOnly {
				t.Errorf("stored Policy after a refused one = %s, want the previous one", got)
			}
			_, err = a.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("refused"), Attributes: map[string]string{"Policy": unknown}})
			wantRefused(err, "CreateQueue with an unknown operator")

			// An empty Policy removes it: B is back to no grant at all.
			mustSet(doc(allowB), "a plain grant")
			bSends(true, "under a plain grant")
			mustSet("", "an empty Policy")
			if got, ok := storedPolicy(); ok {
				t.Errorf("Policy after setting it empty = %q, want none", got)
			}
			bSends(false, "after the Policy was removed")
		})
	}
	// aws:SecureTransport is true over HTTPS: the same Deny lets B in.
	t.Run("https", func(t *testing.T) {
		t.Parallel()
		takeCPUSlot(t)
		url, hc, ctx := accountsGatewayOver(t, sqliteBackend(), true)
		a, bb := accountClientOver(url, keyA, secretA, protocolJSON, hc), accountClientOver(url, keyB, secretB, protocolJSON, hc)
		out, err := a.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("conditions")})
		if err != nil {
			t.Fatalf("A CreateQueue over HTTPS: %v", err)
		}
		arn := "arn:aws:sqs:" + testRegion + ":" + accountA + ":conditions"
		_, err = a.SetQueueAttributes(ctx, &sqs.SetQueueAttributesInput{QueueUrl: out.QueueUrl, Attributes: map[string]string{"Policy": `{"Version":"2012-10-17","Statement":[` +
			`{"Effect":"Allow","Principal":{"AWS":"` + accountB + `"},"Action":"sqs:*","Resource":"` + arn + `"},` +
			`{"Effect":"Deny","Principal":"*","Action":"*","Resource":"*","Condition":{"Bool":{"aws:SecureTransport":"false"}}}]}`}})
		if err != nil {
			t.Fatalf("A sets a Deny without TLS: %v", err)
		}
		if _, err := bb.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: aws.String("over TLS")}); err != nil {
			t.Errorf("B SendMessage over HTTPS under a Deny without TLS: %v", err)
		}
	})
}
