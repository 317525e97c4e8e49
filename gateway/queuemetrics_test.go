package gateway_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anysqs/anysqs/gateway"
	"github.com/anysqs/anysqs/internal/clock"
)

// metricsEnv is a gateway on a fake clock whose per-queue series are collected only
// when the test says (CollectQueueMetrics), with at most maxQueues exported by name.
type metricsEnv struct {
	t     *testing.T
	gw    *gateway.Server
	reg   *prometheus.Registry
	clock *clock.Fake
}

func newMetricsEnv(t *testing.T, maxQueues int) *metricsEnv {
	t.Helper()
	reg := prometheus.NewRegistry()
	clk := clock.NewFake(start)
	gw, err := gateway.New(context.Background(), gateway.Config{Driver: memDriver(t), Clock: clk, PublicURL: "http://sqs.test",
		Metrics: reg, QueueMetrics: gateway.QueueMetrics{Interval: 24 * time.Hour, MaxQueues: maxQueues}})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = gw.Close() })
	return &metricsEnv{t: t, gw: gw, reg: reg, clock: clk}
}

// call runs one AWS JSON request and returns the body, failing on an error status.
func (e *metricsEnv) call(action, body string) string {
	e.t.Helper()
	req := httptest.NewRequest(http.MethodPost, "/", strings.NewReader(body))
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	w := httptest.NewRecorder()
	e.gw.ServeHTTP(w, req)
	if w.Code != http.StatusOK {
		e.t.Fatalf("%s %s: %d %s", action, body, w.Code, w.Body)
	}
	return w.Body.String()
}

func (e *metricsEnv) url(q string) string { return "http://sqs.test/000000000000/" + q }

// receive receives up to n messages of q with visibility timeout vt and returns their
// receipt handles.
func (e *metricsEnv) receive(q string, n, vt int) []string {
	e.t.Helper()
	body := e.call("ReceiveMessage", fmt.Sprintf(`{"QueueUrl":%q,"MaxNumberOfMessages":%d,"VisibilityTimeout":%d}`, e.url(q), n, vt))
	var handles []string
	for _, part := range strings.Split(body, `"ReceiptHandle":"`)[1:] {
		handles = append(handles, part[:strings.IndexByte(part, '"')])
	}
	return handles
}

// series collects and returns every anysqs_queue* sample as `name{queue}` → value.
func (e *metricsEnv) series() map[string]float64 {
	e.t.Helper()
	if err := gateway.CollectQueueMetrics(e.gw); err != nil {
		e.t.Fatal(err)
	}
	mfs, err := e.reg.Gather()
	if err != nil {
		e.t.Fatal(err)
	}
	out := map[string]float64{}
	for _, mf := range mfs {
		if !strings.HasPrefix(mf.GetName(), "anysqs_queue") {
			continue
		}
		for _, m := range mf.GetMetric() {
			var labels []string
			for _, l := range m.GetLabel() {
				if l.GetName() == "queue" {
					labels = append(labels, l.GetValue())
				}
			}
			v := m.GetGauge().GetValue() + m.GetCounter().GetValue()
			out[mf.GetName()+"{"+strings.Join(labels, ",")+"}"] = v
		}
	}
	return out
}

func expectSeries(t *testing.T, got map[string]float64, want map[string]float64) {
	t.Helper()
	var bad []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			bad = append(bad, fmt.Sprintf("%s = %v (present %v), want %v", k, g, ok, v))
		}
	}
	sort.Strings(bad)
	if len(bad) > 0 {
		t.Errorf("per-queue series:\n  %s", strings.Join(bad, "\n  "))
	}
}

// TestQueueMetricsCountKnownTraffic: after known sends, receives, deletes and a
// dead-lettering, the gauges and counters equal them; the oldest message's age advances
// with the clock; a delayed message counts as delayed.
func TestQueueMetricsCountKnownTraffic(t *testing.T) {
	e := newMetricsEnv(t, 0)
	e.call("CreateQueue", `{"QueueName":"work"}`)
	e.call("CreateQueue", `{"QueueName":"work-dlq"}`)
	e.call("CreateQueue", `{"QueueName":"src","Attributes":{"RedrivePolicy":"{\"deadLetterTargetArn\":\"arn:aws:sqs:us-east-1:000000000000:work-dlq\",\"maxReceiveCount\":1}"}}`)

	got := e.series()
	expectSeries(t, got, map[string]float64{
		"anysqs_queue_messages_visible{work}":           0,
		"anysqs_queue_oldest_message_age_seconds{work}": 0,
	})

	for i := range 3 {
		e.call("SendMessage", fmt.Sprintf(`{"QueueUrl":%q,"MessageBody":"m%d"}`, e.url("work"), i))
	}
	e.clock.Advance(10 * time.Second)
	e.call("SendMessageBatch", fmt.Sprintf(`{"QueueUrl":%q,"Entries":[{"Id":"a","MessageBody":"x"},{"Id":"b","MessageBody":"y"},{"Id":"c","MessageBody":"z","DelaySeconds":600}]}`, e.url("work")))
	handles := e.receive("work", 2, 300)
	if len(handles) != 2 {
		t.Fatalf("received %d messages, want 2", len(handles))
	}
	e.call("DeleteMessage", fmt.Sprintf(`{"QueueUrl":%q,"ReceiptHandle":%q}`, e.url("work"), handles[0]))
	e.clock.Advance(20 * time.Second)

	// src's message: received once, then due for redrive at its next receive.
	e.call("SendMessage", fmt.Sprintf(`{"QueueUrl":%q,"MessageBody":"poison"}`, e.url("src")))
	if h := e.receive("src", 1, 0); len(h) != 1 {
		t.Fatalf("first receive of src: %d messages", len(h))
	}
	if h := e.receive("src", 1, 0); len(h) != 0 {
		t.Fatalf("second receive of src returned %d messages; the message should have gone to work-dlq", len(h))
	}

	got = e.series()
	expectSeries(t, got, map[string]float64{
		"anysqs_queue_messages_visible{work}":               3, // 5 sent, 1 delayed, 2 received
		"anysqs_queue_messages_in_flight{work}":             1, // 2 received, 1 deleted
		"anysqs_queue_messages_delayed{work}":               1,
		"anysqs_queue_oldest_message_age_seconds{work}":     30,
		"anysqs_queue_messages_sent_total{work}":            6,
		"anysqs_queue_messages_received_total{work}":        2,
		"anysqs_queue_messages_deleted_total{work}":         1,
		"anysqs_queue_messages_dead_lettered_total{work}":   0,
		"anysqs_queue_messages_sent_total{src}":             1,
		"anysqs_queue_messages_received_total{src}":         1,
		"anysqs_queue_messages_dead_lettered_total{src}":    1,
		"anysqs_queue_messages_visible{src}":                0,
		"anysqs_queue_messages_visible{work-dlq}":           1,
		"anysqs_queues{}":                                   3,
		"anysqs_queue_metrics_collect_errors_total{}":       0,
		"anysqs_queue_oldest_message_age_seconds{work-dlq}": 0, // SQS keeps the original send time: 0 s old here
	})

	e.clock.Advance(90 * time.Second)
	expectSeries(t, e.series(), map[string]float64{"anysqs_queue_oldest_message_age_seconds{work}": 120})

	// Deleting the oldest message moves the age to the next one's.
	e.call("PurgeQueue", fmt.Sprintf(`{"QueueUrl":%q}`, e.url("work")))
	expectSeries(t, e.series(), map[string]float64{
		"anysqs_queue_messages_visible{work}":           0,
		"anysqs_queue_oldest_message_age_seconds{work}": 0,
	})
}

// TestQueueMetricsBoundCardinality: past MaxQueues, queues are summed under
// queue="(other)"; a deleted queue's series go and free its name.
func TestQueueMetricsBoundCardinality(t *testing.T) {
	e := newMetricsEnv(t, 2)
	for _, q := range []string{"a", "b", "c", "d"} {
		e.call("CreateQueue", fmt.Sprintf(`{"QueueName":%q}`, q))
	}
	for i, q := range []string{"a", "b", "c", "d"} {
		for range i + 1 {
			e.call("SendMessage", fmt.Sprintf(`{"QueueUrl":%q,"MessageBody":"x"}`, e.url(q)))
		}
	}
	got := e.series()
	expectSeries(t, got, map[string]float64{
		"anysqs_queue_messages_visible{a}":          1,
		"anysqs_queue_messages_visible{b}":          2,
		"anysqs_queue_messages_visible{(other)}":    7,
		"anysqs_queue_messages_sent_total{(other)}": 7,
		"anysqs_queues{}":                           4,
	})
	for k := range got {
		if strings.HasSuffix(k, "{c}") || strings.HasSuffix(k, "{d}") {
			t.Errorf("%s exported by name beyond max_queues 2", k)
		}
	}
	e.call("DeleteQueue", fmt.Sprintf(`{"QueueUrl":%q}`, e.url("a")))
	e.call("CreateQueue", `{"QueueName":"e"}`)
	e.call("SendMessage", fmt.Sprintf(`{"QueueUrl":%q,"MessageBody":"x"}`, e.url("e")))
	got = e.series()
	if _, ok := got["anysqs_queue_messages_visible{a}"]; ok {
		t.Error("the deleted queue a is still exported")
	}
	expectSeries(t, got, map[string]float64{
		"anysqs_queue_messages_visible{e}":          1,
		"anysqs_queue_messages_sent_total{(other)}": 7, // never decreases
	})
}

// TestFairGroupCounts: a standard queue's noisy and quiet groups, as the extension
// attributes (only when named) and the per-queue gauges report them; a group quiet for
// 5 minutes counts as quiet again.
func TestFairGroupCounts(t *testing.T) {
	e := newMetricsEnv(t, 0)
	e.call("CreateQueue", `{"QueueName":"fair"}`)
	for i := 0; i < 60; i += 10 {
		var entries []string
		for j := i; j < i+10; j++ {
			entries = append(entries, fmt.Sprintf(`{"Id":"%d","MessageBody":"a-%d","MessageGroupId":"a"}`, j, j))
		}
		e.call("SendMessageBatch", fmt.Sprintf(`{"QueueUrl":%q,"Entries":[%s]}`, e.url("fair"), strings.Join(entries, ",")))
	}
	for held := 0; held < 35; {
		n := len(e.receive("fair", min(10, 35-held), 600))
		if n == 0 {
			t.Fatalf("receive: empty after %d", held)
		}
		held += n
	}
	for i := range 2 {
		e.call("SendMessage", fmt.Sprintf(`{"QueueUrl":%q,"MessageBody":"b-%d","MessageGroupId":"b"}`, e.url("fair"), i))
	}
	attrs := func(names string) map[string]string {
		t.Helper()
		var out struct{ Attributes map[string]string }
		body := e.call("GetQueueAttributes", fmt.Sprintf(`{"QueueUrl":%q,"AttributeNames":[%s]}`, e.url("fair"), names))
		if err := json.Unmarshal([]byte(body), &out); err != nil {
			t.Fatal(err)
		}
		return out.Attributes
	}
	const both = `"AnysqsApproximateNumberOfNoisyGroups","AnysqsApproximateNumberOfQuietGroups"`
	if got := attrs(both); got["AnysqsApproximateNumberOfNoisyGroups"] != "1" || got["AnysqsApproximateNumberOfQuietGroups"] != "1" {
		t.Errorf("with a's 35 in flight and b waiting: %v, want 1 noisy and 1 quiet", got)
	}
	if got := attrs(`"All"`); got["AnysqsApproximateNumberOfNoisyGroups"] != "" {
		t.Errorf("All returns the extension attributes: %v", got)
	}
	expectSeries(t, e.series(), map[string]float64{"anysqs_queue_noisy_groups{fair}": 1, "anysqs_queue_quiet_groups{fair}": 1})

	e.clock.Advance(5*time.Minute + time.Second) // a has sent nothing since
	if got := attrs(both); got["AnysqsApproximateNumberOfNoisyGroups"] != "0" || got["AnysqsApproximateNumberOfQuietGroups"] != "2" {
		t.Errorf("5 minutes after a's last send: %v, want 0 noisy and 2 quiet", got)
	}
	expectSeries(t, e.series(), map[string]float64{"anysqs_queue_noisy_groups{fair}": 0, "anysqs_queue_quiet_groups{fair}": 2})

	e.call("CreateQueue", `{"QueueName":"f.fifo","Attributes":{"FifoQueue":"true"}}`)
	var out struct{ Attributes map[string]string }
	body := e.call("GetQueueAttributes", fmt.Sprintf(`{"QueueUrl":%q,"AttributeNames":[%s]}`, e.url("f.fifo"), both))
	if err := json.Unmarshal([]byte(body), &out); err != nil || len(out.Attributes) != 0 {
		t.Errorf("a FIFO queue's group counts: %v %v, want none", out.Attributes, err)
	}
}
