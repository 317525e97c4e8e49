package gateway

import (
	"context"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/anysqs/anysqs/drivers"
)

// QueueMetrics configures the per-queue series of /metrics.
type QueueMetrics struct {
	// Interval is how often the queues' message counts and oldest ages are read from the
	// backend, one queue at a time, in the background: requests never wait for it. 0 means
	// DefaultQueueMetricsInterval; negative turns the per-queue series off.
	Interval time.Duration
	// MaxQueues is how many queues are exported by name; the others are summed under
	// queue="(other)" of their account. 0 means DefaultMaxQueueMetrics.
	MaxQueues int
}

const (
	DefaultQueueMetricsInterval = 15 * time.Second
	DefaultMaxQueueMetrics      = 500
	// OtherQueues is the queue label of the queues beyond MaxQueues. Parentheses are not
	// queue name characters, so no queue can be mistaken for it.
	OtherQueues = "(other)"
)

// queueMetrics keeps the per-queue series: counters the message actions increment, and
// the gauges of the last background collection.
//
// Which queues are exported by name is decided once per queue, at its first count or
// collection, while fewer than max are named; a named queue keeps its series until it
// is deleted. So a queue's counters never move between label sets, which would read as
// a counter reset.
type queueMetrics struct {
	s   *Server
	max int

	mu      sync.Mutex
	named   map[string]*queueSeries // stored queue name → its series
	others  map[string]*queueSeries // account → the (other) series
	samples []queueSample           // the last collection
	// counts maps stored names to their series for the hot path, without the lock.
	counts sync.Map

	collectedAt   atomic.Int64 // gateway-clock unix nanoseconds the last collection read at
	lastCollect   atomic.Int64 // unix nanoseconds of the last collection's end
	lastDuration  atomic.Int64 // nanoseconds it took
	collectErrors atomic.Int64

	descs queueDescs
}

// queueSeries are one label set's counters.
type queueSeries struct {
	account, queue                        string
	sent, received, deleted, deadLettered atomic.Int64
	// uncounted: the backend dead-letters on its own and reports no count, so the
	// dead-lettered series is left out rather than shown as 0.
	uncounted atomic.Bool
}

// queueSample is one queue's gauges, read at a collection.
type queueSample struct {
	account, queue             string
	visible, inFlight, delayed int64
	oldest                     time.Time // zero: empty or unknown
	groups                     bool      // noisy and quiet were read (a standard fair queue)
	noisy, quiet               int64
}

type queueDescs struct {
	visible, inFlight, delayed, age           *prometheus.Desc
	noisy, quiet                              *prometheus.Desc
	sent, received, deleted, deadLettered     *prometheus.Desc
	queues, lastCollect, collectSeconds, errs *prometheus.Desc
}

func newQueueMetrics(s *Server, max int) *queueMetrics {
	l := []string{"account", "queue"}
	d := func(name, help string, labels []string) *prometheus.Desc {
		return prometheus.NewDesc(name, help, labels, nil)
	}
	return &queueMetrics{s: s, max: max, named: map[string]*queueSeries{}, others: map[string]*queueSeries{},
		descs: queueDescs{
			visible:        d("anysqs_queue_messages_visible", "Messages available for retrieval (ApproximateNumberOfMessagesVisible), at the last collection.", l),
			inFlight:       d("anysqs_queue_messages_in_flight", "Messages received and neither deleted nor visible again (ApproximateNumberOfMessagesNotVisible), at the last collection.", l),
			delayed:        d("anysqs_queue_messages_delayed", "Messages not yet available because of a delay (ApproximateNumberOfMessagesDelayed), at the last collection.", l),
			age:            d("anysqs_queue_oldest_message_age_seconds", "Age of the oldest message in the queue, in any state (ApproximateAgeOfOldestMessage), at the last collection; 0 when the queue is empty; absent where the backend cannot tell.", l),
			noisy:          d("anysqs_queue_noisy_groups", "A standard queue's message groups that are noisy by SQS's fair-queue rules and hold visible messages, at the last collection; on backends that serve fair queues natively.", l),
			quiet:          d("anysqs_queue_quiet_groups", "A standard queue's other message groups with messages, at the last collection; on backends that serve fair queues natively.", l),
			sent:           d("anysqs_queue_messages_sent_total", "Messages accepted by SendMessage and SendMessageBatch through this gateway.", l),
			received:       d("anysqs_queue_messages_received_total", "Messages returned by ReceiveMessage through this gateway.", l),
			deleted:        d("anysqs_queue_messages_deleted_total", "Successful DeleteMessage and DeleteMessageBatch entries through this gateway.", l),
			deadLettered:   d("anysqs_queue_messages_dead_lettered_total", "Messages moved from the queue to its dead-letter queue by receives through this gateway; absent where the backend dead-letters on its own (Service Bus).", l),
			queues:         d("anysqs_queues", "Queues, by account, at the last collection.", []string{"account"}),
			lastCollect:    d("anysqs_queue_metrics_last_collect_timestamp_seconds", "When the last collection of the per-queue gauges ended (Unix time).", nil),
			collectSeconds: d("anysqs_queue_metrics_collect_seconds", "How long the last collection of the per-queue gauges took.", nil),
			errs:           d("anysqs_queue_metrics_collect_errors_total", "Collections of the per-queue gauges that failed.", nil),
		}}
}

// series returns the counters stored counts into, deciding its label at its first use.
func (m *queueMetrics) series(stored string) *queueSeries {
	if v, ok := m.counts.Load(stored); ok {
		return v.(*queueSeries)
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.seriesLocked(stored)
}

func (m *queueMetrics) seriesLocked(stored string) *queueSeries {
	if v, ok := m.counts.Load(stored); ok {
		return v.(*queueSeries)
	}
	account, name := m.s.splitStored(stored)
	var qs *queueSeries
	if len(m.named) < m.max {
		qs = &queueSeries{account: account, queue: name}
		m.named[stored] = qs
	} else {
		qs = m.others[account]
		if qs == nil {
			qs = &queueSeries{account: account, queue: OtherQueues}
			m.others[account] = qs
		}
	}
	m.counts.Store(stored, qs)
	return qs
}

// forget drops a deleted queue's series, freeing its name for another queue.
func (m *queueMetrics) forget(stored string) {
	if m == nil {
		return
	}
	m.mu.Lock()
	delete(m.named, stored)
	m.counts.Delete(stored)
	m.mu.Unlock()
}

func (m *queueMetrics) sent(stored string, n int) {
	if m != nil && n > 0 {
		m.series(stored).sent.Add(int64(n))
	}
}

func (m *queueMetrics) received(stored string, n int, deadLettered int32) {
	if m == nil || n == 0 && deadLettered == 0 {
		return
	}
	qs := m.series(stored)
	qs.received.Add(int64(n))
	if deadLettered < 0 {
		qs.uncounted.Store(true)
	} else {
		qs.deadLettered.Add(int64(deadLettered))
	}
}

func (m *queueMetrics) deleted(stored string, n int) {
	if m != nil && n > 0 {
		m.series(stored).deleted.Add(int64(n))
	}
}

// run collects every interval until the gateway closes.
func (m *queueMetrics) run(interval time.Duration) {
	defer m.s.bg.Done()
	t := time.NewTicker(interval)
	defer t.Stop()
	// The first collection waits an interval too: a gateway starting takes no backend
	// connection for metrics before it has served anything.
	for {
		select {
		case <-m.s.ctx.Done():
			return
		case <-t.C:
		}
		if err := m.collect(m.s.ctx); err != nil && m.s.ctx.Err() == nil {
			m.collectErrors.Add(1)
			m.s.log.Warn("per-queue metrics: collection failed", "err", err)
		}
	}
}

// collect reads every queue's counts and oldest message at the gateway clock's now.
func (m *queueMetrics) collect(ctx context.Context) error {
	start := time.Now()
	now := m.s.clock.Now()
	var names []string
	after := ""
	for {
		page, err := m.s.listAll(ctx, drivers.ListQueuesRequest{After: after, Limit: 1000})
		if err != nil {
			return err
		}
		for _, q := range page.Queues {
			names = append(names, q.Name)
		}
		if !page.More || len(page.Queues) == 0 {
			break
		}
		after = page.Queues[len(page.Queues)-1].Name
	}
	// One queue at a time: the collection borrows one of the connections requests use,
	// never several, whatever the number of queues.
	samples := make([]queueSample, len(names))
	for i, name := range names {
		if err := ctx.Err(); err != nil {
			return err
		}
		groups := !strings.HasSuffix(name, ".fifo") && m.s.fairNative(name)
		st, err := m.s.on(name).driver.QueueStats(ctx, drivers.QueueStatsRequest{Name: name, Now: now, Groups: groups})
		if drivers.KindOf(err) == drivers.KindNotFound {
			continue // deleted since it was listed
		}
		if err != nil {
			return err
		}
		account, qname := m.s.splitStored(name)
		samples[i] = queueSample{account: account, queue: qname, visible: st.Visible, inFlight: st.NotVisible,
			delayed: st.Delayed, oldest: st.OldestSentAt, groups: groups, noisy: st.NoisyGroups, quiet: st.QuietGroups}
	}
	m.mu.Lock()
	m.samples = m.samples[:0]
	for i, s := range samples {
		if s.queue == "" {
			continue
		}
		if qs := m.seriesLocked(names[i]); qs.queue == OtherQueues {
			s.queue = OtherQueues
		}
		m.samples = append(m.samples, s)
	}
	m.collectedAt.Store(now.UnixNano())
	m.mu.Unlock()
	m.lastCollect.Store(time.Now().UnixNano())
	m.lastDuration.Store(int64(time.Since(start)))
	return nil
}

// Describe implements prometheus.Collector.
func (m *queueMetrics) Describe(ch chan<- *prometheus.Desc) {
	d := m.descs
	for _, x := range []*prometheus.Desc{d.visible, d.inFlight, d.delayed, d.age, d.noisy, d.quiet, d.sent, d.received, d.deleted,
		d.deadLettered, d.queues, d.lastCollect, d.collectSeconds, d.errs} {
		ch <- x
	}
}

// gauges sums one label set's samples.
type gauges struct {
	visible, inFlight, delayed int64
	noisy, quiet               int64
	groups                     bool
	oldest                     time.Time
	known                      bool // some sample was of a queue whose age is known or that is empty
}

// Collect implements prometheus.Collector: the last collection's gauges (the queues
// beyond MaxQueues summed, their oldest age the greatest) and the counters now.
func (m *queueMetrics) Collect(ch chan<- prometheus.Metric) {
	d := m.descs
	m.mu.Lock()
	now := time.Unix(0, m.collectedAt.Load())
	type key struct{ account, queue string }
	sums := map[key]*gauges{}
	queues := map[string]int{}
	var keys []key
	for _, s := range m.samples {
		queues[s.account]++
		k := key{s.account, s.queue}
		g := sums[k]
		if g == nil {
			g = &gauges{}
			sums[k] = g
			keys = append(keys, k)
		}
		g.visible += s.visible
		g.inFlight += s.inFlight
		g.delayed += s.delayed
		if s.groups {
			g.groups, g.noisy, g.quiet = true, g.noisy+s.noisy, g.quiet+s.quiet
		}
		total := s.visible + s.inFlight + s.delayed
		if total == 0 || !s.oldest.IsZero() {
			g.known = true
		}
		if !s.oldest.IsZero() && (g.oldest.IsZero() || s.oldest.Before(g.oldest)) {
			g.oldest = s.oldest
		}
	}
	counters := make([]*queueSeries, 0, len(m.named)+len(m.others))
	for _, qs := range m.named {
		counters = append(counters, qs)
	}
	for _, qs := range m.others {
		counters = append(counters, qs)
	}
	m.mu.Unlock()
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].account < keys[j].account || keys[i].account == keys[j].account && keys[i].queue < keys[j].queue
	})
	for _, k := range keys {
		g := sums[k]
		ch <- prometheus.MustNewConstMetric(d.visible, prometheus.GaugeValue, float64(g.visible), k.account, k.queue)
		ch <- prometheus.MustNewConstMetric(d.inFlight, prometheus.GaugeValue, float64(g.inFlight), k.account, k.queue)
		ch <- prometheus.MustNewConstMetric(d.delayed, prometheus.GaugeValue, float64(g.delayed), k.account, k.queue)
		if g.groups {
			ch <- prometheus.MustNewConstMetric(d.noisy, prometheus.GaugeValue, float64(g.noisy), k.account, k.queue)
			ch <- prometheus.MustNewConstMetric(d.quiet, prometheus.GaugeValue, float64(g.quiet), k.account, k.queue)
		}
		if g.known {
			age := 0.0
			if !g.oldest.IsZero() {
				age = max(now.Sub(g.oldest).Seconds(), 0)
			}
			ch <- prometheus.MustNewConstMetric(d.age, prometheus.GaugeValue, age, k.account, k.queue)
		}
	}
	for _, qs := range counters {
		ch <- prometheus.MustNewConstMetric(d.sent, prometheus.CounterValue, float64(qs.sent.Load()), qs.account, qs.queue)
		ch <- prometheus.MustNewConstMetric(d.received, prometheus.CounterValue, float64(qs.received.Load()), qs.account, qs.queue)
		ch <- prometheus.MustNewConstMetric(d.deleted, prometheus.CounterValue, float64(qs.deleted.Load()), qs.account, qs.queue)
		if !qs.uncounted.Load() {
			ch <- prometheus.MustNewConstMetric(d.deadLettered, prometheus.CounterValue, float64(qs.deadLettered.Load()), qs.account, qs.queue)
		}
	}
	for account, n := range queues {
		ch <- prometheus.MustNewConstMetric(d.queues, prometheus.GaugeValue, float64(n), account)
	}
	if last := m.lastCollect.Load(); last != 0 {
		ch <- prometheus.MustNewConstMetric(d.lastCollect, prometheus.GaugeValue, float64(last)/1e9)
		ch <- prometheus.MustNewConstMetric(d.collectSeconds, prometheus.GaugeValue, time.Duration(m.lastDuration.Load()).Seconds())
	}
	ch <- prometheus.MustNewConstMetric(d.errs, prometheus.CounterValue, float64(m.collectErrors.Load()))
}
