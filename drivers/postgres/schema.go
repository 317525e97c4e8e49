package postgres

import (
	"context"
	"hash/fnv"

	"github.com/jackc/pgx/v5"

	"github.com/anysqs/anysqs/drivers"
)

// oldestDriver[i] is the oldest driver (schema version it knows) that still works on
// schema version i+1, recorded with the version so that gateways still running, or
// restarted, during a rolling upgrade keep working when a migration only adds what they
// can ignore. 4 and 5 only add tables: a driver of version 3 or 4 keeps move tasks in its
// gateway's memory and does not record deletions, which degrades those two features for
// requests through it but breaks nothing the newer drivers rely on. Under 6, a driver of
// version 4 or 5 cancels a task straight to CANCELLED, and a task it ran that is
// CANCELLING stays so until a newer driver's adoption pass finishes it. 7 only adds an
// index; an older driver keeps its own (stricter) FIFO group rule and delivery order.
// 8 only adds the receipt key table; an older driver issues unsealed handles, which the
// newer drivers refuse, and refuses their sealed ones (see receipt.go): during a rolling
// upgrade a message received through one version and deleted through the other comes
// back after its visibility timeout, as with any handle that no longer deletes. 9 only
// clears columns; an older driver moves a message of a queue that is its own dead-letter
// queue to that queue again, as it did. 10 only adds fair_time: an older driver neither
// writes processing time nor holds noisy groups back, so fairness weakens while it serves.
// 11 makes messages_visible partial: an older driver's standard claim cannot use it and
// reads the queue another way, correct but slower on a deep backlog.
var oldestDriver = []int{1, 2, 3, 3, 3, 3, 3, 3, 3, 3, 3}

// migrations are applied in order; migration i brings the schema to version i+1. Never
// edit a released migration: append a new one, with its oldestDriver entry.
var migrations = []string{
	// 1: shared tables (see doc.go, "Table layout").
	`
CREATE TABLE queues (
	id            integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name          text COLLATE "C" NOT NULL UNIQUE,
	fifo          boolean NOT NULL,
	dedup_group   boolean NOT NULL, -- DeduplicationScope=messageGroup
	retention     integer NOT NULL, -- seconds
	max_receive   integer,          -- RedrivePolicy.maxReceiveCount, NULL without a policy
	dlq_name      text COLLATE "C",
	attributes    jsonb NOT NULL,
	tags          jsonb NOT NULL DEFAULT '{}',
	created_at    timestamptz NOT NULL,
	last_modified timestamptz NOT NULL,
	last_purge    timestamptz
);

-- One sequence numbers every message: it is the row key and, for FIFO queues, the
-- SequenceNumber. Per-group advisory locks make commit order follow it within a group.
CREATE SEQUENCE message_seq;

CREATE TABLE messages (
	queue_id          integer NOT NULL,
	id                bigint NOT NULL DEFAULT nextval('message_seq'),
	message_id        text NOT NULL,
	body              text NOT NULL,
	attrs             bytea,
	sys_attrs         bytea,
	sender_id         text,
	sent_at           timestamptz NOT NULL, -- SentTimestamp
	enqueued_at       timestamptz NOT NULL, -- retention clock: differs after a FIFO redrive
	visible_at        timestamptz NOT NULL,
	receipt           uuid,          -- current receipt token; NULL until first received
	received_at       timestamptz,   -- time of the current claim: visibility ends 12 h after it at most
	receive_count     integer NOT NULL DEFAULT 0,
	first_received_at timestamptz,
	group_id          text,
	dedup_id          text,
	dlq_source        text,
	PRIMARY KEY (queue_id, id)
) WITH (
	-- Measured (issue 4): default autovacuum lets dead index entries pile up at the head
	-- of the queue, and relation truncation stalls all traffic for seconds.
	autovacuum_vacuum_scale_factor = 0,
	autovacuum_vacuum_threshold = 2000,
	autovacuum_vacuum_cost_delay = 0,
	autovacuum_vacuum_insert_scale_factor = 0,
	autovacuum_vacuum_insert_threshold = 20000,
	autovacuum_analyze_scale_factor = 0,
	autovacuum_analyze_threshold = 1000, -- fresh statistics keep plans on the right index
	vacuum_truncate = false
);
ALTER SEQUENCE message_seq OWNED BY messages.id;

-- Standard receive: oldest visible first.
CREATE INDEX messages_visible ON messages (queue_id, visible_at);
-- FIFO receive: is any message of the group ahead? Which follow? Is any in flight?
CREATE INDEX messages_group ON messages (queue_id, group_id, id) WHERE group_id IS NOT NULL;
CREATE INDEX messages_group_hidden ON messages (queue_id, group_id, visible_at) WHERE group_id IS NOT NULL;

CREATE TABLE dedup (
	queue_id   integer NOT NULL,
	scope      text NOT NULL, -- '' for queue scope, the group id for messageGroup scope
	dedup_id   text NOT NULL,
	message_id text NOT NULL,
	seq        bigint NOT NULL,
	expires_at timestamptz NOT NULL,
	PRIMARY KEY (queue_id, scope, dedup_id)
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 2000,
	autovacuum_vacuum_cost_delay = 0, vacuum_truncate = false);
CREATE INDEX dedup_expiry ON dedup (expires_at);

CREATE TABLE receive_attempts (
	queue_id   integer NOT NULL,
	attempt_id text NOT NULL,
	ids        bigint[] NOT NULL,
	receipts   uuid[] NOT NULL,
	expires_at timestamptz NOT NULL,
	PRIMARY KEY (queue_id, attempt_id)
) WITH (autovacuum_vacuum_cost_delay = 0, vacuum_truncate = false);
CREATE INDEX receive_attempts_expiry ON receive_attempts (expires_at);
`,
	// 2: one row per message group of a FIFO queue, so that a claim finds claimable
	// groups by index instead of scanning the backlog (see doc.go, "Semantics").
	// ready_at is never later than the first moment the group may be claimable;
	// existing groups start at -infinity and the first claim that locks them corrects it.
	`
CREATE TABLE fifo_groups (
	queue_id integer NOT NULL,
	group_id text NOT NULL,
	ready_at timestamptz NOT NULL,
	PRIMARY KEY (queue_id, group_id)
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_cost_delay = 0, autovacuum_analyze_scale_factor = 0,
	autovacuum_analyze_threshold = 1000, vacuum_truncate = false);
CREATE INDEX fifo_groups_ready ON fifo_groups (queue_id, ready_at);
INSERT INTO fifo_groups (queue_id, group_id, ready_at)
SELECT DISTINCT m.queue_id, m.group_id, '-infinity'::timestamptz
FROM messages m JOIN queues q ON q.id = m.queue_id
WHERE q.fifo AND m.group_id IS NOT NULL;
`,
	// 3: the queues long polls are waiting on, so that sends notify other gateways only
	// for those (see activity.go). watched() is a send's check: it takes the queue's watch
	// lock shared, and, being VOLATILE, reads watches on a snapshot taken after that lock,
	// whatever the snapshot of the statement that calls it.
	`
CREATE TABLE watches (
	queue text COLLATE "C" PRIMARY KEY,
	until timestamptz NOT NULL
);
CREATE FUNCTION watched(p_class integer, p_key integer, p_queue text, p_now timestamptz) RETURNS boolean
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
	PERFORM pg_advisory_xact_lock_shared(p_class, p_key);
	RETURN EXISTS (SELECT 1 FROM watches w WHERE w.queue = p_queue AND w.until > p_now);
END
$$;
`,
	// 4: message move tasks, shared by the gateways (see movetasks.go). At most one runs
	// per source queue; a queue's tasks go with it.
	`
CREATE TABLE move_tasks (
	seq bigserial PRIMARY KEY,
	handle text COLLATE "C" NOT NULL UNIQUE,
	queue_id integer NOT NULL,
	destination text NOT NULL,
	rate integer,
	started timestamptz NOT NULL,
	to_move bigint NOT NULL,
	moved bigint NOT NULL DEFAULT 0,
	status text NOT NULL,
	failure text NOT NULL DEFAULT '',
	owner text NOT NULL,
	lease_until timestamptz NOT NULL
);
CREATE UNIQUE INDEX move_tasks_one_running ON move_tasks (queue_id) WHERE status = 'RUNNING';
CREATE INDEX move_tasks_by_queue ON move_tasks (queue_id, seq);
CREATE INDEX move_tasks_lease ON move_tasks (lease_until) WHERE status = 'RUNNING';
`,
	// 5: names of queues deleted lately, so that no gateway re-creates one within
	// drivers.QueueNameReuseDelay; the sweep forgets them after that.
	`
CREATE TABLE deleted_queues (
	name text COLLATE "C" PRIMARY KEY,
	deleted_at timestamptz NOT NULL
);
`,
	// 6: a cancelled task is CANCELLING until its runner stops, and still counts as the
	// source's one active task. The unique index keeps its name, which drivers of
	// version 4 and 5 match to tell a second start from other errors.
	`
DROP INDEX move_tasks_one_running;
CREATE UNIQUE INDEX move_tasks_one_running ON move_tasks (queue_id) WHERE status IN ('RUNNING', 'CANCELLING');
DROP INDEX move_tasks_lease;
CREATE INDEX move_tasks_lease ON move_tasks (lease_until) WHERE status IN ('RUNNING', 'CANCELLING');
`,
	// 7: a standard claim also reads the returned messages (received before, visible
	// again) that have been visible longest, so that they go before newer sends.
	`
CREATE INDEX IF NOT EXISTS messages_returned ON messages (queue_id, visible_at) WHERE receipt IS NOT NULL;
`,
	// 8: the MAC key of receipt handles, shared by every gateway on the schema; migrate
	// writes it (see loadReceiptKey).
	`
CREATE TABLE receipt_key (
	id  integer PRIMARY KEY CHECK (id = 1),
	key bytea NOT NULL
);
`,
	// 9: a queue that names itself as its dead-letter queue has no redrive target
	// (sqsrule.RedriveTarget); older drivers stored one, and their claims moved its
	// messages to the queue they were in instead of delivering them.
	`
UPDATE queues SET max_receive = NULL, dlq_name = NULL WHERE dlq_name = name;
`,
	// 10: fair queues' recent processing time per message group of a standard queue, and
	// the queue's total under group_id '' (see fair.go for rank).
	`
CREATE TABLE fair_time (
	queue_id integer NOT NULL,
	group_id text NOT NULL,
	rank     float8 NOT NULL,
	PRIMARY KEY (queue_id, group_id)
) WITH (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 1000,
	autovacuum_vacuum_cost_delay = 0, vacuum_truncate = false);
CREATE INDEX fair_time_rank ON fair_time (queue_id, rank);
`,
	// 11: messages_visible holds the messages never received; messages_returned already
	// holds the others. A claim then writes one index entry for the visibility instead
	// of two, and leaves half the dead entries at the head of the index that a held-back
	// xmin horizon keeps there for every claim to step over.
	`
DROP INDEX messages_visible;
CREATE INDEX messages_visible ON messages (queue_id, visible_at) WHERE receipt IS NULL;
`,
}

// lockKeys are the advisory lock keys of one schema, so that two schemas in one database
// do not serialize each other.
type lockKeys struct {
	class  int32 // (class, 1) migration, (class, 2) retention sweep
	watch  int32 // (watch, hash32(queue)) orders watches against sends, see activity.go
	schema string
}

func newLockKeys(schema string) lockKeys {
	return lockKeys{class: hash32("anysqs:" + schema), watch: hash32("anysqs-watch:" + schema), schema: schema}
}

const (
	lockMigrate int32 = 1
	lockSweep   int32 = 2
)

// group is the single-key lock that orders sends to one FIFO message group. Single-key
// and two-key advisory locks live in separate key spaces.
func (k lockKeys) group(queue, group string) int64 {
	h := fnv.New64a()
	h.Write([]byte(k.schema))
	h.Write([]byte{0})
	h.Write([]byte(queue))
	h.Write([]byte{0})
	h.Write([]byte(group))
	return int64(h.Sum64())
}

func hash32(s string) int32 {
	h := fnv.New32a()
	h.Write([]byte(s))
	return int32(h.Sum32())
}

// migrate brings the schema to the latest version in one transaction, under an advisory
// lock so that gateways starting together migrate once, one after the other.
func (d *Driver) migrate(ctx context.Context) error {
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return mapErr(ctx, err, "migrate: begin")
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1, $2)`, d.keys.class, lockMigrate); err != nil {
		return mapErr(ctx, err, "migrate: lock")
	}
	schema := pgx.Identifier{d.schema}.Sanitize()
	if _, err := tx.Exec(ctx, `CREATE SCHEMA IF NOT EXISTS `+schema); err != nil {
		return mapErr(ctx, err, "migrate: create schema")
	}
	if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+schema+`.schema_version (
		version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		return mapErr(ctx, err, "migrate: version table")
	}
	// Versions recorded before oldest_driver existed count as needing their own version.
	if _, err := tx.Exec(ctx, `ALTER TABLE `+schema+`.schema_version ADD COLUMN IF NOT EXISTS oldest_driver integer`); err != nil {
		return mapErr(ctx, err, "migrate: version table")
	}
	var current, oldest int
	err = tx.QueryRow(ctx, `SELECT version, coalesce(oldest_driver, version) FROM `+schema+`.schema_version
		ORDER BY version DESC LIMIT 1`).Scan(&current, &oldest)
	if err != nil && err != pgx.ErrNoRows {
		return mapErr(ctx, err, "migrate: read version")
	}
	if current > len(migrations) && oldest > len(migrations) {
		return drivers.Errorf(drivers.KindFailedPrecondition,
			"postgres schema %s is at version %d, which needs a driver of version %d or later; this one is %d: upgrade the gateway",
			d.schema, current, oldest, len(migrations))
	}
	// A newer schema this driver can run on skips the loop.
	for v := current; v < len(migrations); v++ {
		if _, err := tx.Exec(ctx, `SET LOCAL search_path TO `+schema); err != nil {
			return mapErr(ctx, err, "migrate: search_path")
		}
		if _, err := tx.Exec(ctx, migrations[v]); err != nil {
			return mapErr(ctx, err, "migrate: apply version "+itoa(v+1))
		}
		if _, err := tx.Exec(ctx, `INSERT INTO `+schema+`.schema_version (version, oldest_driver) VALUES ($1, $2)`,
			v+1, oldestDriver[v]); err != nil {
			return mapErr(ctx, err, "migrate: record version")
		}
	}
	if d.receiptKey, err = loadReceiptKey(ctx, tx, schema); err != nil {
		return err
	}
	return mapErr(ctx, tx.Commit(ctx), "migrate: commit")
}
