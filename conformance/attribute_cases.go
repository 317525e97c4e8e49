package conformance

import (
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/capabilities"
)

// attrRange is one settable attribute with its valid range (from the API reference).
type attrRange struct {
	cap      capabilities.ID
	name     string
	min, max int
}

var attrRanges = []attrRange{
	{capabilities.AttrVisibilityTimeout, "VisibilityTimeout", 0, 43200},
	{capabilities.AttrDelaySeconds, "DelaySeconds", 0, 900},
	{capabilities.AttrRetention, "MessageRetentionPeriod", 60, 1209600},
	{capabilities.AttrMaxMessageSize, "MaximumMessageSize", 1024, 1048576},
	{capabilities.AttrReceiveWait, "ReceiveMessageWaitTimeSeconds", 0, 20},
}

// Queue attributes: defaults, ranges, errors, round trips.
func attributeCases() []tc {
	cases := []tc{
		{Caps: []capabilities.ID{capabilities.QueueStandard}, Name: "default-attributes", Run: func(h *H) {
			name := h.Name("defaults")
			url := h.CreateQueue(name, nil)
			a := h.Attrs(url, types.QueueAttributeNameAll)
			want := map[string]string{"VisibilityTimeout": "30", "DelaySeconds": "0",
				"MessageRetentionPeriod": "345600", "ReceiveMessageWaitTimeSeconds": "0",
				"ApproximateNumberOfMessages": "0", "ApproximateNumberOfMessagesNotVisible": "0",
				"ApproximateNumberOfMessagesDelayed": "0",
				"QueueArn":                           "arn:aws:sqs:" + h.Region + ":" + h.Account + ":" + name}
			for k, v := range want {
				if a[k] != v {
					h.T.Errorf("attribute %s = %q, want %q", k, a[k], v)
				}
			}
			// The default maximum size was 256 KiB and is 1 MiB since 2025; either is SQS.
			if m := a["MaximumMessageSize"]; m != "262144" && m != "1048576" {
				h.T.Errorf("MaximumMessageSize = %q, want 262144 or 1048576", m)
			}
			for _, k := range []string{"CreatedTimestamp", "LastModifiedTimestamp"} {
				h.wantEpochNear(a[k], k, h.Now())
			}
			if _, fifo := a["FifoQueue"]; fifo {
				h.T.Errorf("standard queue reports FifoQueue")
			}
		}},
		{Caps: []capabilities.ID{capabilities.QueueStandard}, Name: "get-selected-attributes-only", Run: func(h *H) {
			url := h.Queue()
			a := h.Attrs(url, types.QueueAttributeNameVisibilityTimeout)
			if len(a) != 1 || a["VisibilityTimeout"] != "30" {
				h.T.Fatalf("GetQueueAttributes(VisibilityTimeout) = %v, want only VisibilityTimeout=30", a)
			}
		}},
		{Caps: []capabilities.ID{capabilities.QueueStandard}, Name: "unknown-attribute-name", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.SetQueueAttributes(h.Ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url),
				Attributes: map[string]string{"NoSuchAttribute": "1"}})
			h.WantErr(err, "SetQueueAttributes NoSuchAttribute", "InvalidAttributeName")
			_, err = h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(h.Name("unk")),
				Attributes: map[string]string{"NoSuchAttribute": "1"}})
			h.WantErr(err, "CreateQueue NoSuchAttribute", "InvalidAttributeName")
		}},
		{Caps: []capabilities.ID{capabilities.QueueStandard}, Name: "get-unknown-attribute-name", Run: func(h *H) {
			url := h.Queue()
			_, err := h.SQS.GetQueueAttributes(h.Ctx, &sqs.GetQueueAttributesInput{QueueUrl: aws.String(url),
				AttributeNames: []types.QueueAttributeName{"NoSuchAttribute"}})
			h.WantErr(err, "GetQueueAttributes NoSuchAttribute", "InvalidAttributeName")
		}},
		{Caps: []capabilities.ID{capabilities.QueueStandard}, Name: "last-modified-advances", Run: func(h *H) {
			url := h.Queue()
			h.Advance(10 * time.Minute)
			h.SetAttrs(url, "DelaySeconds", "3")
			a := h.Attrs(url, types.QueueAttributeNameAll)
			h.wantEpochNear(a["LastModifiedTimestamp"], "LastModifiedTimestamp", h.Now())
			h.wantEpochNear(a["CreatedTimestamp"], "CreatedTimestamp", h.Now().Add(-10*time.Minute))
		}},
		{Caps: []capabilities.ID{capabilities.AttrPolicy}, Name: "policy-round-trip", Run: func(h *H) {
			url := h.Queue()
			arn := h.Arn(url)
			pol := `{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*","Action":"sqs:SendMessage","Resource":"` + arn + `"}]}`
			h.SetAttrs(url, "Policy", pol)
			h.wantSameJSON(h.Attr(url, types.QueueAttributeNamePolicy), pol, "Policy")
		}, Degraded: func(h *H, d capabilities.Declaration) {
			h.attrRoundTrip("Policy", `{"Version":"2012-10-17","Statement":[]}`, capabilities.AttrPolicy, true)
		}},
		{Caps: []capabilities.ID{capabilities.AttrRedrivePolicy, capabilities.RedriveDLQ}, Name: "redrive-policy-round-trip", Run: func(h *H) {
			dlq := h.Queue()
			src := h.Queue()
			pol := `{"deadLetterTargetArn":"` + h.Arn(dlq) + `","maxReceiveCount":3}`
			h.SetAttrs(src, "RedrivePolicy", pol)
			var got struct {
				DeadLetterTargetArn string `json:"deadLetterTargetArn"`
				MaxReceiveCount     any    `json:"maxReceiveCount"`
			}
			raw := h.Attr(src, types.QueueAttributeNameRedrivePolicy)
			if err := json.Unmarshal([]byte(raw), &got); err != nil {
				h.T.Fatalf("RedrivePolicy %q: %v", raw, err)
			}
			if got.DeadLetterTargetArn != h.Arn(dlq) || toInt(got.MaxReceiveCount) != 3 {
				h.T.Fatalf("RedrivePolicy = %s, want target %s and maxReceiveCount 3", raw, h.Arn(dlq))
			}
		}},
		{Caps: []capabilities.ID{capabilities.AttrRedrivePolicy}, Name: "redrive-policy-missing-target", Run: func(h *H) {
			src := h.Queue()
			missing := "arn:aws:sqs:" + h.Region + ":" + h.Account + ":" + h.Name("nodlq")
			_, err := h.SQS.SetQueueAttributes(h.Ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(src),
				Attributes: map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + missing + `","maxReceiveCount":3}`}})
			h.WantErr(err, "RedrivePolicy to a missing queue", "InvalidParameterValue", "InvalidAttributeValue")
		}},
		{Caps: []capabilities.ID{capabilities.AttrRedrivePolicy}, Name: "redrive-policy-bad-max-receive-count", Run: func(h *H) {
			dlq, src := h.Queue(), h.Queue()
			_, err := h.SQS.SetQueueAttributes(h.Ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(src),
				Attributes: map[string]string{"RedrivePolicy": `{"deadLetterTargetArn":"` + h.Arn(dlq) + `","maxReceiveCount":0}`}})
			h.WantErr(err, "RedrivePolicy maxReceiveCount 0", "InvalidParameterValue", "InvalidAttributeValue")
		}},
		{Caps: []capabilities.ID{capabilities.AttrContentDedup}, Name: "content-dedup-rejected-on-standard", Run: func(h *H) {
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(h.Name("cbd")),
				Attributes: map[string]string{"ContentBasedDeduplication": "true"}})
			h.WantErr(err, "ContentBasedDeduplication on a standard queue", "InvalidAttributeName", "InvalidAttributeValue", "InvalidParameterValue")
		}},
		{Caps: []capabilities.ID{capabilities.AttrContentDedup, capabilities.QueueFIFO}, Name: "content-dedup-settable-on-fifo", Run: func(h *H) {
			url := h.FifoQueue()
			h.SetAttrs(url, "ContentBasedDeduplication", "true")
			if got := h.Attr(url, types.QueueAttributeNameContentBasedDeduplication); got != "true" {
				h.T.Fatalf("ContentBasedDeduplication = %q, want true", got)
			}
		}},
		{Caps: []capabilities.ID{capabilities.QueueFIFO}, Name: "fifo-attribute-immutable", Run: func(h *H) {
			url := h.FifoQueue()
			_, err := h.SQS.SetQueueAttributes(h.Ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url),
				Attributes: map[string]string{"FifoQueue": "false"}})
			h.WantErr(err, "SetQueueAttributes FifoQueue", "InvalidAttributeName", "InvalidAttributeValue")
		}},
		{Caps: []capabilities.ID{capabilities.AttrDedupScope}, Name: "high-throughput-fifo-attributes", Run: func(h *H) {
			url := h.FifoQueue("DeduplicationScope", "messageGroup", "FifoThroughputLimit", "perMessageGroupId")
			a := h.Attrs(url, types.QueueAttributeNameAll)
			if a["DeduplicationScope"] != "messageGroup" || a["FifoThroughputLimit"] != "perMessageGroupId" {
				h.T.Fatalf("attributes %v: want DeduplicationScope=messageGroup FifoThroughputLimit=perMessageGroupId", a)
			}
		}},
		{Caps: []capabilities.ID{capabilities.AttrThroughputLimit}, Name: "throughput-limit-round-trip", Run: func(h *H) {
			h.attrRoundTrip("FifoThroughputLimit", "perQueue", capabilities.AttrThroughputLimit, false)
		}, Degraded: func(h *H, d capabilities.Declaration) {
			h.attrRoundTrip("FifoThroughputLimit", "perQueue", capabilities.AttrThroughputLimit, true)
		}},
		{Caps: []capabilities.ID{capabilities.AttrDedupScope}, Name: "dedup-scope-invalid-value", Run: func(h *H) {
			_, err := h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(h.FifoName("scope")),
				Attributes: map[string]string{"FifoQueue": "true", "DeduplicationScope": "everywhere"}})
			h.WantErr(err, "DeduplicationScope=everywhere", "InvalidAttributeValue", "InvalidParameterValue")
		}},
		{Caps: []capabilities.ID{capabilities.AttrRedriveAllow}, Name: "redrive-allow-policy-round-trip", Run: func(h *H) {
			url := h.Queue()
			pol := `{"redrivePermission":"denyAll"}`
			h.SetAttrs(url, "RedriveAllowPolicy", pol)
			h.wantSameJSON(h.Attr(url, types.QueueAttributeNameRedriveAllowPolicy), pol, "RedriveAllowPolicy")
		}},
	}
	for _, r := range attrRanges {
		cases = append(cases,
			tc{Caps: []capabilities.ID{r.cap}, Name: "range-bounds-accepted", Run: func(h *H) {
				hi := r.max
				if r.cap == capabilities.AttrMaxMessageSize {
					hi = min(hi, h.maxMessageBytes()) // above a backend's declared size the gateway refuses
				}
				for _, v := range []int{r.min, hi} {
					url := h.Queue(r.name, strconv.Itoa(v))
					if got := h.Attr(url, types.QueueAttributeName(r.name)); got != strconv.Itoa(v) {
						h.T.Fatalf("%s created as %d reads back %q", r.name, v, got)
					}
					h.SetAttrs(url, r.name, strconv.Itoa(r.min+hi-v))
					if got := h.Attr(url, types.QueueAttributeName(r.name)); got != strconv.Itoa(r.min+hi-v) {
						h.T.Fatalf("%s set to %d reads back %q", r.name, r.min+hi-v, got)
					}
				}
			}},
			tc{Caps: []capabilities.ID{r.cap}, Name: "range-out-of-bounds-rejected", Run: func(h *H) {
				url := h.Queue()
				before := h.Attr(url, types.QueueAttributeName(r.name))
				for _, v := range []string{strconv.Itoa(r.min - 1), strconv.Itoa(r.max + 1), "abc"} {
					_, err := h.SQS.SetQueueAttributes(h.Ctx, &sqs.SetQueueAttributesInput{QueueUrl: aws.String(url),
						Attributes: map[string]string{r.name: v}})
					h.WantErr(err, "SetQueueAttributes "+r.name+"="+v, "InvalidAttributeValue")
					_, err = h.SQS.CreateQueue(h.Ctx, &sqs.CreateQueueInput{QueueName: aws.String(h.Name("oob")),
						Attributes: map[string]string{r.name: v}})
					h.WantErr(err, "CreateQueue "+r.name+"="+v, "InvalidAttributeValue")
				}
				if after := h.Attr(url, types.QueueAttributeName(r.name)); after != before {
					h.T.Fatalf("%s changed from %s to %s by rejected requests", r.name, before, after)
				}
			}},
		)
	}
	return cases
}

// wantEpochNear checks an epoch-seconds attribute is within 2 s of want.
func (h *H) wantEpochNear(s, name string, want time.Time) {
	h.T.Helper()
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		h.T.Errorf("%s = %q: not epoch seconds", name, s)
		return
	}
	if d := time.Unix(n, 0).Sub(want); d < -2*time.Second || d > 2*time.Second {
		h.T.Errorf("%s = %s (%v), want about %v (the gateway's clock)", name, s, time.Unix(n, 0).UTC(), want.UTC())
	}
}

// wantSameJSON compares two JSON documents by value.
func (h *H) wantSameJSON(got, want, what string) {
	h.T.Helper()
	var g, w any
	if err := json.Unmarshal([]byte(got), &g); err != nil {
		h.T.Fatalf("%s = %q: not JSON: %v", what, got, err)
	}
	_ = json.Unmarshal([]byte(want), &w)
	gb, _ := json.Marshal(g)
	wb, _ := json.Marshal(w)
	if string(gb) != string(wb) {
		h.T.Fatalf("%s = %s, want %s", what, got, want)
	}
}

// toInt reads a JSON number or numeric string.
func toInt(v any) int {
	switch x := v.(type) {
	case float64:
		return int(x)
	case string:
		n, _ := strconv.Atoi(strings.TrimSpace(x))
		return n
	}
	return -1
}
