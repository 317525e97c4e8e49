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
	native, degraded := capabilities.Native.Declare, capabilities.Degraded.Declare
	window := []string{"window_seconds", strconv.Itoa(sqsrule.DedupWindowSeconds)}
	return []capabilities.Declaration{
		native(capabilities.QueueStandard, ""),
		native(capabilities.QueueFIFO, ""),
		native(capabilities.QueueCreate, "a queue is a row; creation is one INSERT"),
		native(capabilities.QueuePurge, "one transaction deletes every message sent up to the purge"),
		native(capabilities.QueueTags, "", "max_tags", strconv.Itoa(sqsrule.MaxQueueTags)),
		native(capabilities.FIFOOrdering, "a claim locks eligible groups (SKIP LOCKED on a per-group table) and reads only their first messages; groups are claimed in parallel"),
		native(capabilities.FIFOGroupBatch, "", "max_messages", strconv.Itoa(sqsrule.MaxReceiveMessages)),
		native(capabilities.FIFOGroupRelease, "groups are claimed in order of the moment their first message became visible (fifo_groups.ready_at)"),
		native(capabilities.FIFODedupExplicit, "dedup records live in their own table, written in the send's transaction", window...),
		native(capabilities.FIFODedupContent, "", window...),
		native(capabilities.FIFODedupEcho, ""),
		native(capabilities.FIFODedupScopeGroup, ""),
		native(capabilities.FIFOSequenceNumber, "sequence numbers are 64-bit, increasing within a queue"),
		native(capabilities.FIFOReceiveAttempt, "", window...),
		native(capabilities.VisibilityTimeout, ""),
		native(capabilities.VisibilityMax, "", "max_seconds", strconv.Itoa(sqsrule.MaxVisibilityTimeout)),
		native(capabilities.VisibilityChange, ""),
		native(capabilities.VisibilityRelease, ""),
		native(capabilities.ReceiptDurable, "handles name a row and a token stored in it; any gateway instance accepts them"),
		native(capabilities.ReceiptStale, ""),
		native(capabilities.DelayQueue, "", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		native(capabilities.DelayMessage, "", "max_seconds", strconv.Itoa(sqsrule.MaxDelaySeconds)),
		native(capabilities.RedriveDLQ, "moved in the claim's own statement", "max_receive_count", strconv.Itoa(sqsrule.MaxMaxReceiveCount), "move", "atomic"),
		native(capabilities.RedriveAllow, ""),
		native(capabilities.RedriveMoveTasks, "tasks are kept in the database: every gateway lists and cancels them, and another gateway adopts a task whose gateway stopped", "max_messages_per_second", "500", "move", "atomic"),
		native(capabilities.RetentionPeriod, "expired messages are never received; the sweep deletes them in bounded batches later", "min_seconds", strconv.Itoa(sqsrule.MinMessageRetentionPeriod), "max_seconds", strconv.Itoa(sqsrule.MaxMessageRetentionPeriod), "sweep", "driver"),
		native(capabilities.MessageMaxSize, "", "max_bytes", strconv.Itoa(sqsrule.MaxMessageSize)),
		native(capabilities.MessageAttrs, "", "max_count", strconv.Itoa(sqsrule.MaxMessageAttributes)),
		native(capabilities.MessageSystem, ""),
		native(capabilities.RedeliveryOrder, "a claim looks at the longest-visible messages and the longest-visible returned ones, and hands out older sends first"),
		native(capabilities.QueueBrowse, "peek reads the stored rows in send order, outside any claim; nothing is written"),
		native(capabilities.FairQueues, "a group holding 30 or more in-flight messages and over 10% of them, or over 10% of the recent processing time (receive to delete, kept in the database for every gateway), is noisy until it holds no message or has sent nothing for 5 minutes; a receive hands out the other groups' visible messages first (those without a group among the 200 longest visible), then the noisy groups', the fewest in flight first"),
		native(capabilities.LongPolling, "sends on any gateway wake waiting receives on every gateway through LISTEN/NOTIFY", "mode", "native"),
		native(capabilities.InFlightLimit, "counted by the gateway from the queue's exact in-flight count, shared by every gateway"),
		native(capabilities.CountsApprox, "counted in one statement", "accuracy", "exact"),
		native(capabilities.AttrVisibilityTimeout, ""),
		native(capabilities.AttrDelaySeconds, ""),
		native(capabilities.AttrRetention, ""),
		native(capabilities.AttrMaxMessageSize, ""),
		native(capabilities.AttrReceiveWait, ""),
		native(capabilities.AttrRedrivePolicy, ""),
		native(capabilities.AttrRedriveAllow, ""),
		native(capabilities.AttrPolicy, "the document is stored with the queue"),
		native(capabilities.AttrContentDedup, ""),
		native(capabilities.AttrDedupScope, ""),
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

// oldestTransactionSQL is the age of the oldest transaction on the gateway's database
// that holds back the xmin horizon, in seconds (0 when none): while it stays open, vacuum
// keeps every row version deleted since it began and claims step over them. Sessions of
// other roles show only to a role with pg_read_all_stats.
const oldestTransactionSQL = `SELECT coalesce(extract(epoch FROM max(now() - xact_start)), 0)::float8
	FROM pg_stat_activity
	WHERE datname = current_database() AND (backend_xmin IS NOT NULL OR backend_xid IS NOT NULL)
		AND pid <> pg_backend_pid()`

// Metrics reports the driver's connection pool: how many connections are busy, and how
// often and how long requests waited for one, which is where an undersized max_conns
// shows first; and the oldest transaction holding back vacuum on the database, read at
// each scrape (left out when the query fails).
func (d *Driver) Metrics(ctx context.Context) ([]drivers.Metric, error) {
	var oldest []drivers.Metric
	var age float64
	if err := d.pool.QueryRow(ctx, oldestTransactionSQL).Scan(&age); err == nil {
		oldest = append(oldest, drivers.Metric{Name: "anysqs_postgres_oldest_transaction_seconds", Type: drivers.Gauge,
			Help:  "Age of the oldest transaction on the database that holds back vacuum (0 when none).",
			Value: age})
	}
	st := d.pool.Stat()
	conns := func(state string, n int32) drivers.Metric {
		return drivers.Metric{Name: "anysqs_postgres_pool_connections", Type: drivers.Gauge,
			Help:   "Pool connections by state: acquired (running a statement), idle, constructing.",
			Labels: []drivers.Label{{Name: "state", Value: state}}, Value: float64(n)}
	}
	return append([]drivers.Metric{
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
	}, oldest...), nil
}
