package conformance

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// Queue lifecycle: create, get URL, list, delete, and the errors around them.
func queueCases() []tc {
	std := []capabilities.ID{capabilities.QueueCreate, capabilities.QueueStandard}
	return []tc{
		{Caps: std, Name: "queue-name-as-queue-url", Run: func(h *H) {
			name := h.Name("byname")
			h.CreateQueue(name, nil)
			// SQS takes a bare queue name where a URL is expected: the caller's queue of that name.
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(name), MessageBody: aws.String("by name")})
			h.Must(err, "SendMessage QueueUrl="+name)
			out, err := h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(name)})
			h.Must(err, "ReceiveMessage QueueUrl="+name)
			if len(out.Messages) != 1 || aws.ToString(out.Messages[0].Body) != "by name" {
				h.T.Fatalf("ReceiveMessage QueueUrl=%s returned %+v, want the message sent by name", name, out.Messages)
			}
		}},
		{Caps: std, Name: "create-returns-queue-url", Run: func(h *H) {
			name := h.Name("url")
			url := h.CreateQueue(name, nil)
			if want := h.URL + "/" + h.Account + "/" + name; url != want {
				h.T.Fatalf("QueueUrl = %q, want %q", url, want)
			}
		}},
		{Caps: std, Name: "name-reuse-waits-60-seconds-after-delete", Run: func(h *H) {
			h.checkNameReuse(h.SQS)
		}},
		{Caps: std, Name: "create-idempotent-same-attributes", Run: func(h *H) {
			name := h.Name("idem")
			a := map[string]string{"VisibilityTimeout": "45", "DelaySeconds": "5"}
			u1 := h.CreateQueue(name, a)
			u2 := h.CreateQueue(name, a)
			if u1 != u2 {
				h.T.Fatalf("second CreateQueue returned %q, first %q", u2, u1)
			}
		}},
		{Caps: std, Name: "create-conflict-different-attributes", Run: func(h *H) {
			name := h.Name("conflict")
			h.CreateQueue(name, map[string]string{"VisibilityTimeout": "45"})
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name),
				Attributes: map[string]string{"VisibilityTimeout": "46"}})
			h.WantErr(err, "CreateQueue with other attributes", "QueueNameExists")
			if got := h.Attr(h.urlOf(name), types.QueueAttributeNameVisibilityTimeout); got != "45" {
				h.T.Fatalf("VisibilityTimeout after conflicting create = %s, want 45", got)
			}
		}},
		{Caps: std, Name: "get-queue-url", Run: func(h *H) {
			name := h.Name("get")
			url := h.CreateQueue(name, nil)
			if got := h.urlOf(name); got != url {
				h.T.Fatalf("GetQueueUrl = %q, want %q", got, url)
			}
		}},
		{Caps: std, Name: "get-queue-url-nonexistent", Run: func(h *H) {
			_, err := h.SQS.GetQueueUrl(h.Ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(h.Name("missing"))})
			h.WantErr(err, "GetQueueUrl of a missing queue", "QueueDoesNotExist")
		}},
		{Caps: std, Name: "list-queues-prefix", Run: func(h *H) {
			pa, pb := h.Name("alpha"), h.Name("beta")
			var want []string
			for i := 0; i < 3; i++ {
				want = append(want, h.CreateQueue(fmt.Sprintf("%s-%d", pa, i), nil))
			}
			h.CreateQueue(pb+"-0", nil)
			got := h.listAll(pa, 0)
			sort.Strings(want)
			sort.Strings(got)
			if strings.Join(got, ",") != strings.Join(want, ",") {
				h.T.Fatalf("ListQueues(prefix %s) = %v, want %v", pa, got, want)
			}
		}},
		{Caps: std, Name: "list-queues-paging", Run: func(h *H) {
			p := h.Name("page")
			want := map[string]bool{}
			for i := 0; i < 5; i++ {
				want[h.CreateQueue(fmt.Sprintf("%s-%d", p, i), nil)] = true
			}
			got := h.listAll(p, 2)
			if len(got) != 5 {
				h.T.Fatalf("paged ListQueues returned %d urls %v, want 5", len(got), got)
			}
			for _, u := range got {
				if !want[u] {
					h.T.Fatalf("paged ListQueues returned %q twice or unexpectedly", u)
				}
				delete(want, u)
			}
		}},
		{Caps: std, Name: "list-queues-max-results-range", Run: func(h *H) {
			_, err := h.SQS.ListQueues(h.Ctx, &sqs.ListQueuesInput{MaxResults: aws.Int32(1001)})
			h.WantErr(err, "ListQueues MaxResults=1001", "InvalidParameterValue")
		}},
		{Caps: std, Name: "delete-queue", Run: func(h *H) {
			name := h.Name("del")
			url := h.CreateQueue(name, nil)
			h.Send(url, "x")
			_, err := h.SQS.DeleteQueue(h.Ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
			h.Must(err, "DeleteQueue")
			_, err = h.SQS.GetQueueUrl(h.Ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
			h.WantErr(err, "GetQueueUrl after delete", "QueueDoesNotExist")
			if got := h.listAll(name, 0); len(got) != 0 {
				h.T.Fatalf("deleted queue still listed: %v", got)
			}
		}},
		{Caps: std, Name: "delete-queue-nonexistent", Run: func(h *H) {
			_, err := h.SQS.DeleteQueue(h.Ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(h.missingURL())})
			h.WantErr(err, "DeleteQueue of a missing queue", "QueueDoesNotExist")
		}},
		{Caps: std, Name: "nonexistent-queue-send-receive-attributes", Run: func(h *H) {
			url := h.missingURL()
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("x")})
			h.WantErr(err, "SendMessage to a missing queue", "QueueDoesNotExist")
			_, err = h.SQS.ReceiveMessage(h.Ctx, &sqs.ReceiveMessageInput{QueueUrl: aws.String(url)})
			h.WantErr(err, "ReceiveMessage from a missing queue", "QueueDoesNotExist")
			_, err = h.SQS.GetQueueAttributes(h.Ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url)})
			h.WantErr(err, "GetQueueAttributes of a missing queue", "QueueDoesNotExist")
			_, err = h.SQS.SetQueueAttributes(h.Ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url),
				Attributes: map[string]string{"DelaySeconds": "1"}})
			h.WantErr(err, "SetQueueAttributes of a missing queue", "QueueDoesNotExist")
			_, err = h.SQS.PurgeQueue(h.Ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)})
			h.WantErr(err, "PurgeQueue of a missing queue", "QueueDoesNotExist")
		}},
		{Caps: std, Name: "queue-name-invalid-characters", Run: func(h *H) {
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(h.Name("bad!name"))})
			h.WantErr(err, "CreateQueue bad!name", "InvalidParameterValue")
		}},
		{Caps: std, Name: "queue-name-length", Run: func(h *H) {
			name := h.Name("len")
			ok := name + strings.Repeat("a", 80-len(name))
			h.CreateQueue(ok, nil)
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(ok + "a")})
			h.WantErr(err, "CreateQueue with an 81-character name", "InvalidParameterValue")
		}},
		{Caps: std, Name: "queue-url-forms-accepted", Run: func(h *H) {
			// SDKs address queues by the URL CreateQueue returned; some rewrite the host.
			name := h.Name("form")
			h.CreateQueue(name, nil)
			alt := strings.Replace(h.URL, "127.0.0.1", "localhost", 1) + "/" + h.Account + "/" + name
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(alt), MessageBody: aws.String("x")})
			h.Must(err, "SendMessage via "+alt)
		}},
		{Caps: []capabilities.ID{capabilities.QueueFIFO, capabilities.QueueCreate}, Name: "fifo-create-and-attributes", Run: func(h *H) {
			url := h.FifoQueue()
			a := h.Attrs(url, types.QueueAttributeNameAll)
			if a["FifoQueue"] != "true" || a["ContentBasedDeduplication"] != "false" {
				h.T.Fatalf("FIFO queue attributes %v: want FifoQueue=true ContentBasedDeduplication=false", a)
			}
		}},
		{Caps: []capabilities.ID{capabilities.QueueFIFO}, Name: "fifo-attribute-needs-fifo-suffix", Run: func(h *H) {
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(h.Name("nosuffix")),
				Attributes: map[string]string{"FifoQueue": "true"}})
			h.WantErr(err, "CreateQueue FifoQueue=true without .fifo", "InvalidParameterValue", "InvalidAttributeValue")
		}},
		{Caps: []capabilities.ID{capabilities.QueueFIFO}, Name: "fifo-suffix-needs-fifo-attribute", Run: func(h *H) {
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(h.FifoName("noattr"))})
			h.WantErr(err, "CreateQueue x.fifo without FifoQueue", "InvalidParameterValue", "InvalidAttributeValue")
		}},
		{Caps: []capabilities.ID{capabilities.AttrPolicy}, Name: "add-and-remove-permission", Run: func(h *H) {
			url := h.Queue()
			arn := h.Arn(url)
			const other = "111122223333"
			_, err := h.SQS.AddPermission(h.Ctx, &sqs.AddPermissionInput{QueueUrl: aws.String(url), Label: aws.String("send-only"),
				AWSAccountIds: []string{other}, Actions: []string{"SendMessage"}})
			h.Must(err, "AddPermission send-only")
			_, err = h.SQS.AddPermission(h.Ctx, &sqs.AddPermissionInput{QueueUrl: aws.String(url), Label: aws.String("readers"),
				AWSAccountIds: []string{other, h.Account}, Actions: []string{"ReceiveMessage", "DeleteMessage"}})
			h.Must(err, "AddPermission readers")
			h.wantSameJSON(h.Attr(url, types.QueueAttributeNamePolicy), `{"Version":"2008-10-17","Id":"`+arn+`/SQSDefaultPolicy","Statement":[`+
				`{"Sid":"send-only","Effect":"Allow","Principal":{"AWS":"arn:aws:iam::`+other+`:root"},"Action":"SQS:SendMessage","Resource":"`+arn+`"},`+
				`{"Sid":"readers","Effect":"Allow","Principal":{"AWS":["arn:aws:iam::`+other+`:root","arn:aws:iam::`+h.Account+`:root"]},`+
				`"Action":["SQS:ReceiveMessage","SQS:DeleteMessage"],"Resource":"`+arn+`"}]}`, "Policy after two AddPermission")

			_, err = h.SQS.AddPermission(h.Ctx, &sqs.AddPermissionInput{QueueUrl: aws.String(url), Label: aws.String("send-only"),
				AWSAccountIds: []string{other}, Actions: []string{"SendMessage"}})
			h.WantErr(err, "AddPermission with a label in use", "InvalidParameterValue")
			if !strings.Contains(err.Error(), "Value send-only for parameter Label is invalid. Reason: Already exists.") {
				h.T.Errorf("duplicate label: %v, want SQS's message", err)
			}

			_, err = h.SQS.RemovePermission(h.Ctx, &sqs.RemovePermissionInput{QueueUrl: aws.String(url), Label: aws.String("send-only")})
			h.Must(err, "RemovePermission send-only")
			if pol := h.Attr(url, types.QueueAttributeNamePolicy); strings.Contains(pol, "send-only") || !strings.Contains(pol, "readers") {
				h.T.Fatalf("Policy after RemovePermission send-only = %s, want the readers statement only", pol)
			}
			_, err = h.SQS.RemovePermission(h.Ctx, &sqs.RemovePermissionInput{QueueUrl: aws.String(url), Label: aws.String("send-only")})
			h.WantErr(err, "RemovePermission of a removed label", "InvalidParameterValue")
			_, err = h.SQS.RemovePermission(h.Ctx, &sqs.RemovePermissionInput{QueueUrl: aws.String(url), Label: aws.String("readers")})
			h.Must(err, "RemovePermission readers")
			if pol := h.Attr(url, types.QueueAttributeNamePolicy); pol != "" {
				h.T.Fatalf("Policy after removing every label = %s, want none", pol)
			}
		}},
	}
}

// urlOf returns GetQueueUrl(name).
func (h *H) urlOf(name string) string {
	h.T.Helper()
	out, err := h.SQS.GetQueueUrl(h.Ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	h.Must(err, "GetQueueUrl "+name)
	return aws.ToString(out.QueueUrl)
}

// listAll pages through ListQueues with prefix, pageSize results at a time (0: one call).
func (h *H) listAll(prefix string, pageSize int32) []string {
	h.T.Helper()
	var urls []string
	in := &sqs.ListQueuesInput{QueueNamePrefix: aws.String(prefix)}
	if pageSize > 0 {
		in.MaxResults = aws.Int32(pageSize)
	}
	for i := 0; ; i++ {
		out, err := h.SQS.ListQueues(h.Ctx, in)
		h.Must(err, "ListQueues")
		if pageSize > 0 && int32(len(out.QueueUrls)) > pageSize {
			h.T.Fatalf("ListQueues page of %d > MaxResults %d", len(out.QueueUrls), pageSize)
		}
		urls = append(urls, out.QueueUrls...)
		if out.NextToken == nil || *out.NextToken == "" {
			return urls
		}
		if i > 100 {
			h.T.Fatalf("ListQueues paging does not end")
		}
		in.NextToken = out.NextToken
	}
}

// checkNameReuse deletes a queue and re-creates its name through c: refused with
// QueueDeletedRecently 59 s after the delete, accepted 61 s after it.
func (h *H) checkNameReuse(c *sqs.Client) {
	h.T.Helper()
	name := h.Name("reuse")
	url := h.CreateQueue(name, nil)
	_, err := h.SQS.DeleteQueue(h.Ctx, &sqs.DeleteQueueInput{QueueUrl: aws.String(url)})
	h.Must(err, "DeleteQueue")
	h.Advance(59 * time.Second)
	_, err = c.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	h.WantErr(err, "CreateQueue 59 s after deleting the name", "QueueDeletedRecently")
	h.Advance(2 * time.Second)
	_, err = c.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name)})
	h.Must(err, "CreateQueue 61 s after deleting the name")
}

// missingURL is the URL a queue would have if it existed.
func (h *H) missingURL() string { return h.URL + "/" + h.Account + "/" + h.Name("missing") }
