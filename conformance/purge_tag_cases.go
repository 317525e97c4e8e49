package conformance

import (
	"fmt"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// Purge, tags, approximate counts, and the encryption attributes.
func purgeTagCases() []tc {
	purge := []capabilities.ID{capabilities.QueuePurge}
	tags := []capabilities.ID{capabilities.QueueTags}
	return []tc{
		{Caps: purge, Name: "purge-removes-every-message", Run: func(h *H) {
			url := h.Queue()
			for i := 0; i < 5; i++ {
				h.Send(url, bodyN(i))
			}
			h.ReceiveOne(url, 30) // one in flight
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("delayed"), DelaySeconds: 60})
			h.Must(err, "SendMessage delayed")
			_, err = h.SQS.PurgeQueue(h.Ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)})
			h.Must(err, "PurgeQueue")
			h.Advance(61 * time.Second)
			h.ReceiveNone(url, "after purge")
			h.WantCounts(url, 0, 0, 0)
		}},
		{Caps: purge, Name: "purge-once-per-sixty-seconds", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.PurgeQueue(h.Ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)})
			h.Must(err, "first PurgeQueue")
			h.Send(url, "after first purge")
			h.Advance(59 * time.Second)
			_, err = h.SQS.PurgeQueue(h.Ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)})
			h.WantErr(err, "PurgeQueue 59 s after the last", "PurgeQueueInProgress")
			h.ReceiveOne(url, 0) // the rejected purge deleted nothing
			h.Advance(2 * time.Second)
			_, err = h.SQS.PurgeQueue(h.Ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(url)})
			h.Must(err, "PurgeQueue 61 s after the last")
		}},
		{Caps: purge, Name: "purge-leaves-other-queues", Run: func(h *H) {
			a, b := h.Queue(), h.Queue()
			h.Send(a, "a")
			h.Send(b, "b")
			_, err := h.SQS.PurgeQueue(h.Ctx, &sqs.PurgeQueueInput{QueueUrl: aws.String(a)})
			h.Must(err, "PurgeQueue")
			h.ReceiveOne(b, 0)
		}},
		{Caps: tags, Name: "create-with-tags", Run: func(h *H) {
			name := h.Name("tagged")
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Tags: map[string]string{"team": "core", "env": "test"}})
			h.Must(err, "CreateQueue with tags")
			h.wantTags(h.urlOf(name), map[string]string{"team": "core", "env": "test"})
		}},
		{Caps: tags, Name: "tag-overwrite-untag", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.TagQueue(h.Ctx, &sqs.TagQueueInput{QueueUrl: aws.String(url), Tags: map[string]string{"a": "1", "b": "2"}})
			h.Must(err, "TagQueue")
			_, err = h.SQS.TagQueue(h.Ctx, &sqs.TagQueueInput{QueueUrl: aws.String(url), Tags: map[string]string{"b": "3", "c": ""}})
			h.Must(err, "TagQueue overwrite")
			h.wantTags(url, map[string]string{"a": "1", "b": "3", "c": ""})
			_, err = h.SQS.UntagQueue(h.Ctx, &sqs.UntagQueueInput{QueueUrl: aws.String(url), TagKeys: []string{"a", "missing"}})
			h.Must(err, "UntagQueue")
			h.wantTags(url, map[string]string{"b": "3", "c": ""})
		}},
		{Caps: tags, Name: "tag-keys-case-sensitive", Run: func(h *H) {
			// SQS: tag keys are case-sensitive, so "mytag" and "MyTag" are two tags.
			name := h.Name("cased")
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(name), Tags: map[string]string{"env": "a", "Env": "b"}})
			h.Must(err, "CreateQueue with tags env and Env")
			url := h.urlOf(name)
			h.wantTags(url, map[string]string{"env": "a", "Env": "b"})
			_, err = h.SQS.TagQueue(h.Ctx, &sqs.TagQueueInput{QueueUrl: aws.String(url), Tags: map[string]string{"mytag": "1", "MyTag": "2"}})
			h.Must(err, "TagQueue with mytag and MyTag")
			h.wantTags(url, map[string]string{"env": "a", "Env": "b", "mytag": "1", "MyTag": "2"})
			_, err = h.SQS.UntagQueue(h.Ctx, &sqs.UntagQueueInput{QueueUrl: aws.String(url), TagKeys: []string{"mytag", "ENV"}})
			h.Must(err, "UntagQueue mytag and ENV")
			h.wantTags(url, map[string]string{"env": "a", "Env": "b", "MyTag": "2"})
		}},
		{Caps: tags, Name: "no-tags-empty", Run: func(h *H) {
			h.wantTags(h.Queue(), map[string]string{})
		}},
		{Caps: tags, Name: "tags-of-missing-queue", Run: func(h *H) {
			_, err := h.SQS.ListQueueTags(h.Ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(h.missingURL())})
			h.WantErr(err, "ListQueueTags of a missing queue", "QueueDoesNotExist")
			_, err = h.SQS.TagQueue(h.Ctx, &sqs.TagQueueInput{QueueUrl: aws.String(h.missingURL()), Tags: map[string]string{"a": "1"}})
			h.WantErr(err, "TagQueue of a missing queue", "QueueDoesNotExist")
		}},
		{Caps: tags, Name: "too-many-tags", Run: func(h *H) {
			url := h.Queue()
			t := map[string]string{}
			for i := 0; i < 51; i++ {
				t[fmt.Sprint("k", i)] = "v"
			}
			_, err := h.SQS.TagQueue(h.Ctx, &sqs.TagQueueInput{QueueUrl: aws.String(url), Tags: t})
			h.WantErr(err, "TagQueue with 51 tags", "InvalidParameterValue", "OverLimit", "TooManyTags")
			h.wantTags(url, map[string]string{})
		}},
		{Caps: []capabilities.ID{capabilities.CountsApprox}, Name: "counts-by-state", Run: func(h *H) {
			url := h.Queue()
			for i := 0; i < 3; i++ {
				h.Send(url, bodyN(i))
			}
			_, err := h.SQS.SendMessage(h.Ctx, &sqs.SendMessageInput{QueueUrl: aws.String(url), MessageBody: aws.String("d"), DelaySeconds: 60})
			h.Must(err, "SendMessage delayed")
			h.ReceiveOne(url, 30)
			h.wantCountsAsDeclared(url, 2, 1, 1)
			h.Advance(31 * time.Second)
			h.wantCountsAsDeclared(url, 3, 0, 1)
			h.Advance(30 * time.Second)
			h.wantCountsAsDeclared(url, 4, 0, 0)
		}},
		{Caps: []capabilities.ID{capabilities.CountsApprox}, Name: "counts-after-delete", Run: func(h *H) {
			url := h.Queue()
			h.Send(url, "a")
			h.Send(url, "b")
			for _, m := range h.receiveN(url, 2, 30) {
				h.Delete(url, m)
			}
			h.wantCountsAsDeclared(url, 0, 0, 0)
		}},
		{Caps: []capabilities.ID{capabilities.AttrKMS}, Name: "kms-key-round-trip", Run: func(h *H) {
			h.attrRoundTrip("KmsMasterKeyId", "alias/aws/sqs", capabilities.AttrKMS, false)
		}, Degraded: func(h *H, d capabilities.Declaration) {
			h.attrRoundTrip("KmsMasterKeyId", "alias/aws/sqs", capabilities.AttrKMS, true)
		}},
		{Caps: []capabilities.ID{capabilities.AttrKMSReuse}, Name: "kms-data-key-reuse-round-trip", Run: func(h *H) {
			h.attrRoundTrip("KmsDataKeyReusePeriodSeconds", "600", capabilities.AttrKMSReuse, false)
		}, Degraded: func(h *H, d capabilities.Declaration) {
			h.attrRoundTrip("KmsDataKeyReusePeriodSeconds", "600", capabilities.AttrKMSReuse, true)
		}},
		{Caps: []capabilities.ID{capabilities.AttrKMSReuse}, Name: "kms-data-key-reuse-range", Run: func(h *H) {
			url := h.Queue()
			for _, v := range []string{"59", "86401"} {
				_, err := h.SQS.SetQueueAttributes(h.Ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"KmsDataKeyReusePeriodSeconds": v}})
				h.WantErr(err, "KmsDataKeyReusePeriodSeconds="+v, "InvalidAttributeValue")
			}
		}, Degraded: func(h *H, d capabilities.Declaration) {
			url := h.Queue()
			_, err := h.SQS.SetQueueAttributes(h.Ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url), Attributes: map[string]string{"KmsDataKeyReusePeriodSeconds": "59"}})
			h.WantErr(err, "KmsDataKeyReusePeriodSeconds=59 (validated even when degraded)", "InvalidAttributeValue")
		}},
		{Caps: []capabilities.ID{capabilities.AttrSSE}, Name: "sse-default-claims-only-what-the-backend-does", Run: func(h *H) {
			if got := h.Attr(h.Queue(), types.QueueAttributeNameSqsManagedSseEnabled); got != "true" {
				h.T.Fatalf("SqsManagedSseEnabled of a new queue = %q, want true (the backend declares encryption at rest native)", got)
			}
		}, Degraded: func(h *H, d capabilities.Declaration) {
			url := h.Queue()
			if got := h.Attr(url, types.QueueAttributeNameSqsManagedSseEnabled); got != "false" {
				h.T.Fatalf("SqsManagedSseEnabled of a new queue = %q on a backend declaring %s degraded (%s), want false", got, d.ID, d.Note)
			}
			h.SetAttrs(url, "SqsManagedSseEnabled", "false")
			if got := h.LastHeader("X-Anysqs-Degraded"); got != "" {
				h.T.Fatalf("SqsManagedSseEnabled=false: X-Anysqs-Degraded = %q, want none (asking for no encryption claims nothing)", got)
			}
		}},
		{Caps: []capabilities.ID{capabilities.AttrSSE}, Name: "sse-round-trip", Run: func(h *H) {
			h.attrRoundTrip("SqsManagedSseEnabled", "true", capabilities.AttrSSE, false)
		}, Degraded: func(h *H, d capabilities.Declaration) {
			h.attrRoundTrip("SqsManagedSseEnabled", "true", capabilities.AttrSSE, true)
		}},
	}
}

// attrRoundTrip sets attribute name on a new queue and reads it back. Degraded: the value
// is stored and returned as the catalog says, and the response names the capability in
// X-Anysqs-Degraded.
func (h *H) attrRoundTrip(name, value string, id capabilities.ID, degraded bool) {
	h.T.Helper()
	url := h.Queue()
	if fifoOnlyAttr(name) {
		url = h.FifoQueue()
	}
	h.SetAttrs(url, name, value)
	if degraded {
		if got := h.LastHeader("X-Anysqs-Degraded"); !strings.Contains(got, string(id)) {
			h.T.Fatalf("SetQueueAttributes %s on a backend declaring %s Degraded: X-Anysqs-Degraded = %q, want it to name %s", name, id, got, id)
		}
	}
	if got := h.Attr(url, types.QueueAttributeName(name)); got != value {
		h.T.Fatalf("%s = %q, want %q", name, got, value)
	}
}

// wantCountsAsDeclared compares counts exactly when the backend declares them exact;
// otherwise it checks they are non-negative and not above the truth plus in-flight.
func (h *H) wantCountsAsDeclared(url string, visible, notVisible, delayed int) {
	h.T.Helper()
	if d, ok := h.declaration(capabilities.CountsApprox); ok && d.Limits["accuracy"] == "exact" {
		h.WantCounts(url, visible, notVisible, delayed)
		return
	}
	v, n, d := h.Counts(url)
	if v < 0 || n < 0 || d < 0 || v+n+d > visible+notVisible+delayed {
		h.T.Fatalf("approximate counts (%d, %d, %d) impossible for (%d, %d, %d)", v, n, d, visible, notVisible, delayed)
	}
}

// wantTags compares ListQueueTags with want.
func (h *H) wantTags(url string, want map[string]string) {
	h.T.Helper()
	out, err := h.SQS.ListQueueTags(h.Ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(url)})
	h.Must(err, "ListQueueTags")
	if len(out.Tags) != len(want) {
		h.T.Fatalf("tags %v, want %v", out.Tags, want)
	}
	for k, v := range want {
		if got, ok := out.Tags[k]; !ok || got != v {
			h.T.Fatalf("tags %v, want %v", out.Tags, want)
		}
	}
}
