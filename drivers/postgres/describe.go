package postgres

import (
	"context"
	"strconv"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// Describe reports the driver, the server version and the capability declarations.
func (d *Driver) Describe(ctx context.Context) (drivers.Description, error) {
	var version string
	var autovacuum bool
	if err := d.pool.QueryRow(ctx, `SELECT current_setting('server_version'),
		current_setting('autovacuum')::bool AND current_setting('track_counts')::bool`).Scan(&version, &autovacuum); err != nil {
		return drivers.Description{}, mapErr(ctx, err, "server version")
	}
	desc := drivers.Description{Name: "postgres", Version: Version, ServiceVersion: version,
		Clock: drivers.ClockGateway, ReceiptScope: drivers.ReceiptStorage, SharedStorage: true,
		Activity: drivers.ActivityWatch, MoveTaskStore: true, Capabilities: declarations(),
		Operations: operations()}
	if !autovacuum && !d.vacuum {
		// The tables' own autovacuum parameters (schema.go) are what keep claims fast; with
		// the server's autovacuum off they do nothing.
		desc.Warnings = append(desc.Warnings, "autovacuum is off on this PostgreSQL server (autovacuum or "+
			"track_counts): dead rows of received and deleted messages pile up in schema "+d.schema+
			" and receives slow down over time; turn it on, or set the backend option vacuum_on_sweep")
	}
	return desc, nil
}

func declarations() []capabilities.Declaration {
	native := func(id capabilities.ID, limits map[string]string, note string) capabilities.Declaration {
		return capabilities.Declaration{ID: id, Level: capabilities.Native, Limits: limits, Note: note}
	}
	degraded := func(id capabilities.ID, note string) capabilities.Declaration {
		return capabilities.Declaration{ID: id, Level: capabilities.Degraded, Note: note}
	}
	window := map[string]string{"window_seconds": "300"}
	return []capabilities.Declaration{
		native(capabilities.QueueStandard, nil, ""),
		native(capabilities.QueueFIFO, nil, ""),
		native(capabilities.QueueCreate, nil, "a queue is a row; creation is one INSERT"),
		native(capabilities.QueuePurge, nil, "one transaction deletes every message sent up to the purge"),
		native(capabilities.QueueTags, map[string]string{"max_tags": "50"}, ""),
		native(capabilities.FIFOOrdering, nil, "a claim locks eligible groups (SKIP LOCKED on a per-group table) and reads only their first messages; groups are claimed in parallel"),
		native(capabilities.FIFOGroupBatch, map[string]string{"max_messages": "10"}, ""),
		native(capabilities.FIFOGroupRelease, nil, "groups are claimed in order of the moment their first message became visible (fifo_groups.ready_at)"),
		native(capabilities.FIFODedupExplicit, window, "dedup records live in their own table, written in the send's transaction"),
		native(capabilities.FIFODedupContent, window, ""),
		native(capabilities.FIFODedupEcho, nil, ""),
		native(capabilities.FIFODedupScopeGroup, nil, ""),
		native(capabilities.FIFOSequenceNumber, nil, "sequence numbers are 64-bit, increasing within a queue"),
		native(capabilities.FIFOReceiveAttempt, window, ""),
		native(capabilities.VisibilityTimeout, nil, ""),
		native(capabilities.VisibilityMax, map[string]string{"max_seconds": strconv.Itoa(sqsrule.MaxVisibilityTimeout)}, ""),
		native(capabilities.VisibilityChange, nil, ""),
		native(capabilities.VisibilityRelease, nil, ""),
		native(capabilities.ReceiptDurable, nil, "handles name a row and a token stored in it; any gateway instance accepts them"),
		native(capabilities.ReceiptStale, nil, ""),
		native(capabilities.DelayQueue, map[string]string{"max_seconds": strconv.Itoa(sqsrule.MaxDelaySeconds)}, ""),
		native(capabilities.DelayMessage, map[string]string{"max_seconds": strconv.Itoa(sqsrule.MaxDelaySeconds)}, ""),
		native(capabilities.RedriveDLQ, map[string]string{"max_receive_count": "1000", "move": "atomic"}, "moved in the claim's own statement"),
		native(capabilities.RedriveAllow, nil, ""),
		native(capabilities.RedriveMoveTasks, map[string]string{"max_messages_per_second": "500", "move": "atomic"},
			"tasks are kept in the database: every gateway lists and cancels them, and another gateway adopts a task whose gateway stopped"),
		native(capabilities.RetentionPeriod, map[string]string{"min_seconds": strconv.Itoa(sqsrule.MinMessageRetentionPeriod), "max_seconds": strconv.Itoa(sqsrule.MaxMessageRetentionPeriod), "sweep": "driver"},
			"expired messages are never received; the sweep deletes them in bounded batches later"),
		native(capabilities.MessageMaxSize, map[string]string{"max_bytes": strconv.Itoa(sqsrule.MaxMessageSize)}, ""),
		native(capabilities.MessageAttrs, map[string]string{"max_count": "10"}, ""),
		native(capabilities.MessageSystem, nil, ""),
		native(capabilities.RedeliveryOrder, nil, "a claim looks at the longest-visible messages and the longest-visible returned ones, and hands out older sends first"),
		native(capabilities.QueueBrowse, nil, "peek reads the stored rows in send order, outside any claim; nothing is written"),
		degraded(capabilities.FairQueues, "MessageGroupId is kept and returned on standard queues, but a receive ignores it: one group's flood delays the other groups' messages"),
		native(capabilities.LongPolling, map[string]string{"mode": "native"},
			"sends on any gateway wake waiting receives on every gateway through LISTEN/NOTIFY"),
		native(capabilities.CountsApprox, map[string]string{"accuracy": "exact"}, "counted in one statement"),
		native(capabilities.AttrVisibilityTimeout, nil, ""),
		native(capabilities.AttrDelaySeconds, nil, ""),
		native(capabilities.AttrRetention, nil, ""),
		native(capabilities.AttrMaxMessageSize, nil, ""),
		native(capabilities.AttrReceiveWait, nil, ""),
		native(capabilities.AttrRedrivePolicy, nil, ""),
		native(capabilities.AttrRedriveAllow, nil, ""),
		native(capabilities.AttrPolicy, nil, "stored by the backend; the gateway enforces it for other accounts (account principals, sqs actions, queue resources; conditions are refused when set)"),
		native(capabilities.AttrContentDedup, nil, ""),
		native(capabilities.AttrDedupScope, nil, ""),
		degraded(capabilities.AttrThroughputLimit, "stored and returned; throughput is PostgreSQL's own"),
		degraded(capabilities.AttrKMS, "stored and returned; encryption at rest is PostgreSQL's own"),
		degraded(capabilities.AttrKMSReuse, "stored and returned without effect"),
		degraded(capabilities.AttrSSE, "stored and returned; encryption at rest is PostgreSQL's own"),
	}
}

// Ping checks that the database answers, on a pool connection.
func (d *Driver) Ping(ctx context.Context) error {
	return mapErr(ctx, d.pool.Ping(ctx), "ping")
}

// Metrics reports the driver's connection pool: how many connections are busy, and how
// often and how long requests waited for one, which is where an undersized max_conns
// shows first.
func (d *Driver) Metrics(ctx context.Context) ([]drivers.Metric, error) {
	st := d.pool.Stat()
	conns := func(state string, n int32) drivers.Metric {
		return drivers.Metric{Name: "anysqs_postgres_pool_connections", Type: drivers.Gauge,
			Help:   "Pool connections by state: acquired (running a statement), idle, constructing.",
			Labels: []drivers.Label{{Name: "state", Value: state}}, Value: float64(n)}
	}
	return []drivers.Metric{
		conns("acquired", st.AcquiredConns()),
		conns("idle", st.IdleConns()),
		conns("constructing", st.ConstructingConns()),
		{Name: "anysqs_postgres_pool_max_connections", Type: drivers.Gauge,
			Help: "The pool's max_conns.", Value: float64(st.MaxConns())},
		{Name: "anysqs_postgres_pool_acquires_total", Type: drivers.Counter,
			Help: "Connections acquired from the pool.", Value: float64(st.AcquireCount())},
		{Name: "anysqs_postgres_pool_empty_acquires_total", Type: drivers.Counter,
			Help:  "Acquires that found no idle connection and waited for one (or for a new one).",
			Value: float64(st.EmptyAcquireCount())},
		{Name: "anysqs_postgres_pool_acquire_seconds_total", Type: drivers.Counter,
			Help: "Time spent acquiring connections.", Value: st.AcquireDuration().Seconds()},
	}, nil
}
