package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"

	"github.com/anysqs/anysqs/drivers"
)

// schemaVersion is the version migrations bring a database to; Open refuses a newer one.
var schemaVersion = len(migrations) - 1

// migrations[v] takes a database from version v-1 to v. Released steps never change.
var migrations = [][]string{
	0: nil,
	1: {
		// AUTOINCREMENT so that ids of deleted queues and messages are never reused: a stale
		// receipt handle must not name a newer row.
		`CREATE TABLE IF NOT EXISTS queues (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		name TEXT NOT NULL UNIQUE,
		fifo INTEGER NOT NULL,
		attrs TEXT NOT NULL,
		tags TEXT NOT NULL,
		retention_ns INTEGER NOT NULL,
		created_at INTEGER NOT NULL,
		last_modified INTEGER NOT NULL,
		last_purge INTEGER,
		next_seq INTEGER NOT NULL DEFAULT 0)`,
		`CREATE TABLE IF NOT EXISTS messages (
		id INTEGER PRIMARY KEY AUTOINCREMENT,
		queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
		message_id TEXT NOT NULL,
		body TEXT NOT NULL,
		attrs TEXT NOT NULL,
		sys_attrs TEXT NOT NULL,
		sender_id TEXT NOT NULL,
		sent_at INTEGER NOT NULL,
		enqueued_at INTEGER NOT NULL,
		visible_at INTEGER NOT NULL,
		receive_count INTEGER NOT NULL DEFAULT 0,
		first_received_at INTEGER NOT NULL DEFAULT 0,
		token TEXT,
		group_id TEXT NOT NULL DEFAULT '',
		dedup_id TEXT NOT NULL DEFAULT '',
		seq INTEGER NOT NULL DEFAULT 0,
		dlq_source TEXT NOT NULL DEFAULT '')`,
		`CREATE INDEX IF NOT EXISTS messages_visible ON messages(queue_id, visible_at)`,
		`CREATE INDEX IF NOT EXISTS messages_group ON messages(queue_id, group_id, seq)`,
		`CREATE INDEX IF NOT EXISTS messages_seq ON messages(queue_id, seq)`,
		`CREATE INDEX IF NOT EXISTS messages_enqueued ON messages(queue_id, enqueued_at)`,
		`CREATE TABLE IF NOT EXISTS dedup (
		queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
		scope TEXT NOT NULL,
		dedup_id TEXT NOT NULL,
		message_id TEXT NOT NULL,
		seq INTEGER NOT NULL,
		expires_at INTEGER NOT NULL,
		PRIMARY KEY (queue_id, scope, dedup_id))`,
		`CREATE INDEX IF NOT EXISTS dedup_expiry ON dedup(expires_at)`,
		`CREATE TABLE IF NOT EXISTS receive_attempts (
		queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
		attempt_id TEXT NOT NULL,
		claims TEXT NOT NULL,
		expires_at INTEGER NOT NULL,
		PRIMARY KEY (queue_id, attempt_id))`,
		`CREATE INDEX IF NOT EXISTS receive_attempts_expiry ON receive_attempts(expires_at)`,
	},
	2: {
		// received_at is the time of the receive that issued the current handle: SQS caps
		// a message's invisibility at 12 hours from it.
		`ALTER TABLE messages ADD COLUMN received_at INTEGER NOT NULL DEFAULT 0`,
		// FIFO receives find blocking groups through messages_visible now.
		`DROP INDEX IF EXISTS messages_group`,
	},
	3: {
		// enqueued_at in the visibility index lets QueueStats count visible, unexpired
		// messages from the index alone.
		`DROP INDEX IF EXISTS messages_visible`,
		`CREATE INDEX messages_visible ON messages(queue_id, visible_at, enqueued_at)`,
	},
	4: {
		// fifo_groups lists each FIFO group with its earliest message, kept by triggers on
		// every insert and delete, so a FIFO receive walks groups in head order instead of
		// every message queued behind a group that is in flight.
		`CREATE TABLE fifo_groups (
			queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
			group_id TEXT NOT NULL,
			head_seq INTEGER NOT NULL,
			PRIMARY KEY (queue_id, group_id))`,
		`CREATE UNIQUE INDEX fifo_groups_head ON fifo_groups(queue_id, head_seq)`,
		`CREATE INDEX messages_group_seq ON messages(queue_id, group_id, seq)`,
		`INSERT INTO fifo_groups(queue_id, group_id, head_seq)
			SELECT queue_id, group_id, MIN(seq) FROM messages WHERE seq > 0 GROUP BY queue_id, group_id`,
		`CREATE TRIGGER fifo_groups_insert AFTER INSERT ON messages WHEN NEW.seq > 0 BEGIN
			INSERT OR IGNORE INTO fifo_groups(queue_id, group_id, head_seq) VALUES (NEW.queue_id, NEW.group_id, NEW.seq);
		END`,
		// head_seq is NOT NULL under a UNIQUE index so that the planner knows heads are
		// distinct and can stream each group's messages in order without sorting.
		`CREATE TRIGGER fifo_groups_delete AFTER DELETE ON messages WHEN OLD.seq > 0 BEGIN
			DELETE FROM fifo_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id
				AND NOT EXISTS (SELECT 1 FROM messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id);
			UPDATE fifo_groups SET head_seq = (SELECT MIN(seq) FROM messages
				WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id)
				WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND head_seq = OLD.seq;
		END`,
	},
	5: {
		// Partial indexes for the FIFO receive's blocking lookups: claimed messages (which
		// groups are in flight) and, per group, never-claimed ones (where the group's
		// delayed messages start), each read without the other.
		`CREATE INDEX messages_claimed ON messages(queue_id, visible_at, group_id) WHERE token IS NOT NULL`,
		`CREATE INDEX messages_group_unclaimed ON messages(queue_id, group_id, visible_at, seq) WHERE token IS NULL`,
	},
	6: {
		// Message move tasks (movetasks.go), so that they outlive a restart; they go with
		// their queue.
		`CREATE TABLE move_tasks (
			seq INTEGER PRIMARY KEY AUTOINCREMENT,
			handle TEXT NOT NULL UNIQUE,
			queue_id INTEGER NOT NULL REFERENCES queues(id) ON DELETE CASCADE,
			destination TEXT NOT NULL,
			rate INTEGER,
			started INTEGER NOT NULL,
			to_move INTEGER NOT NULL,
			moved INTEGER NOT NULL DEFAULT 0,
			status TEXT NOT NULL,
			failure TEXT NOT NULL DEFAULT '',
			owner TEXT NOT NULL,
			lease_until INTEGER NOT NULL)`,
		`CREATE UNIQUE INDEX move_tasks_one_running ON move_tasks(queue_id) WHERE status = 'RUNNING'`,
		`CREATE INDEX move_tasks_by_queue ON move_tasks(queue_id, seq)`,
	},
	7: {
		// Names of queues deleted lately, so that one is not re-created within
		// drivers.QueueNameReuseDelay, also across a restart; the sweep forgets them.
		`CREATE TABLE deleted_queues (name TEXT PRIMARY KEY, deleted_at INTEGER NOT NULL)`,
	},
	8: {
		// A cancelled task is CANCELLING until its runner stops, and still counts as the
		// source's one active task.
		`DROP INDEX move_tasks_one_running`,
		`CREATE UNIQUE INDEX move_tasks_one_running ON move_tasks(queue_id) WHERE status IN ('RUNNING', 'CANCELLING')`,
	},
	9: {
		// A FIFO group is available from the moment its head became visible, and receives
		// serve groups in that order (the Driver contract): fifo_groups keeps the head's
		// visible_at, by triggers on every insert, delete and visibility change, under a
		// unique index the receive walks in order. Where a group's first invisible message
		// (in flight or delayed) is, the receive reads from messages_group_hidden.
		`ALTER TABLE fifo_groups ADD COLUMN head_visible_at INTEGER NOT NULL DEFAULT 0`,
		`UPDATE fifo_groups SET head_visible_at = COALESCE((SELECT m.visible_at FROM messages m
			WHERE m.queue_id = fifo_groups.queue_id AND m.seq = fifo_groups.head_seq), 0)`,
		`CREATE UNIQUE INDEX fifo_groups_ready ON fifo_groups(queue_id, head_visible_at, head_seq)`,
		`DROP TRIGGER fifo_groups_insert`,
		`CREATE TRIGGER fifo_groups_insert AFTER INSERT ON messages WHEN NEW.seq > 0 BEGIN
			INSERT OR IGNORE INTO fifo_groups(queue_id, group_id, head_seq, head_visible_at)
				VALUES (NEW.queue_id, NEW.group_id, NEW.seq, NEW.visible_at);
		END`,
		`DROP TRIGGER fifo_groups_delete`,
		`CREATE TRIGGER fifo_groups_delete AFTER DELETE ON messages WHEN OLD.seq > 0 BEGIN
			DELETE FROM fifo_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id
				AND NOT EXISTS (SELECT 1 FROM messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id);
			UPDATE fifo_groups SET (head_seq, head_visible_at) = (SELECT seq, visible_at FROM messages
				WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id ORDER BY seq LIMIT 1)
				WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND head_seq = OLD.seq;
		END`,
		`CREATE TRIGGER fifo_groups_visible AFTER UPDATE OF visible_at ON messages WHEN NEW.seq > 0 BEGIN
			UPDATE fifo_groups SET head_visible_at = NEW.visible_at
				WHERE queue_id = NEW.queue_id AND group_id = NEW.group_id AND head_seq = NEW.seq;
		END`,
		`DROP INDEX messages_group_unclaimed`,
		`CREATE INDEX messages_group_hidden ON messages(queue_id, group_id, visible_at, seq) WHERE seq > 0`,
	},
	10: {
		// Standard messages have no sequence number and mostly no group: partial indexes
		// leave them out of the FIFO and group indexes, so a standard message without a
		// group is written to three indexes instead of five. Queries that read these
		// indexes name the predicate (group_id <> '', seq > 0) for SQLite to use them.
		// SQLite never scans a range for <>, so a group's equality stays the key.
		`DROP INDEX messages_seq`,
		`CREATE INDEX messages_seq ON messages(queue_id, seq) WHERE seq > 0`,
		`DROP INDEX messages_group_seq`,
		`CREATE INDEX messages_group_seq ON messages(queue_id, group_id, seq) WHERE group_id <> ''`,
		`DROP TRIGGER fifo_groups_delete`,
		`CREATE TRIGGER fifo_groups_delete AFTER DELETE ON messages WHEN OLD.seq > 0 BEGIN
			DELETE FROM fifo_groups WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id
				AND NOT EXISTS (SELECT 1 FROM messages WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id
					AND group_id <> '');
			UPDATE fifo_groups SET (head_seq, head_visible_at) = (SELECT seq, visible_at FROM messages
				WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND group_id <> '' ORDER BY seq LIMIT 1)
				WHERE queue_id = OLD.queue_id AND group_id = OLD.group_id AND head_seq = OLD.seq;
		END`,
	},
}

func (d *Driver) migrate(ctx context.Context) error {
	return d.write(ctx, func(tx conn) error {
		if _, err := tx.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL)`); err != nil {
			return err
		}
		version := 0
		var v string
		err := tx.QueryRowContext(ctx, `SELECT value FROM meta WHERE key = 'schema_version'`).Scan(&v)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if version, err = strconv.Atoi(v); err != nil {
				return drivers.Errorf(drivers.KindFailedPrecondition, "sqlite: database schema version %q is not a number", v)
			}
		}
		if version > schemaVersion {
			return drivers.Errorf(drivers.KindFailedPrecondition,
				"sqlite: database schema version %d is newer than this driver's %d", version, schemaVersion)
		}
		for next := version + 1; next <= schemaVersion; next++ {
			for _, stmt := range migrations[next] {
				if _, err := tx.ExecContext(ctx, stmt); err != nil {
					return fmt.Errorf("schema version %d: %w", next, err)
				}
			}
		}
		if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES ('schema_version', ?)`,
			strconv.Itoa(schemaVersion)); err != nil {
			return err
		}
		return d.loadSecret(ctx, tx)
	})
}
