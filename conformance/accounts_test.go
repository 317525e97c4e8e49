package conformance_test

import (
	"context"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

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
	st := b.prepare(t)
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	d, err := st.open(ctx)
	if err != nil {
		t.Fatalf("open %s: %v", b.name, err)
	}
	t.Cleanup(func() { d.Close() })
	srv := httptest.NewUnstartedServer(nil)
	gw, err := gateway.New(ctx, gateway.Config{
		Driver: d, AccountID: testAccount, Region: testRegion, PublicURL: "http://" + srv.Listener.Addr().String(),
		Logger:      slog.New(slog.NewTextHandler(io.Discard, nil)),
		Credentials: map[string]string{testAccessKey: testSecretKey, keyA: secretA, keyB: secretB},
		Accounts:    map[string]string{keyA: accountA, keyB: accountB},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { gw.Close() })
	srv.Config.Handler = gw
	srv.Start()
	t.Cleanup(srv.Close)
	return srv.URL, ctx
}

func accountClient(url, key, secret string) *sqs.Client {
	return sqs.New(sqs.Options{
		Region: testRegion, BaseEndpoint: aws.String(url), Retryer: aws.NopRetryer{},
		Credentials: credentials.NewStaticCredentialsProvider(key, secret, ""),
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
