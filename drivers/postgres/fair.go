package postgres

import "sync"

// Fair queues, as SQS specifies them. On a standard queue a message group names a
// tenant; each message without a group is a tenant of its own and never noisy. A group
// is noisy when either holds:
//   - concurrency share: it holds at least 30 in-flight messages and more than a tenth of
//     the queue's in-flight messages;
//   - processing-time share: it took more than a tenth of the queue's recent processing
//     time, the time from a receive to the delete of the message received, decayed with
//     a one-minute half-life.
//
// A group stops being noisy once it holds no message (its backlog drained), or once it
// has sent nothing for 5 minutes. While some group is noisy, a claim takes the other
// groups' visible messages first, then the noisy groups', the group with the fewest
// messages in flight first. Every gateway reads the same state, so they agree.
//
// Processing time lives in fair_time, one row per group and one for the queue's total
// (group_id ''). A row keeps rank = log2(seconds) + t/60, where t is the epoch second of
// its last update, so that rank - now/60 is the log2 of the decayed seconds at now:
// ranks compare groups at any time without being rewritten as they decay, and an index
// on rank finds the groups over a tenth of the total (rank > total's rank - log2(10))
// without reading the others. A delete statement adds the processing time of the
// in-flight messages it deletes; a standard queue whose messages have no group writes
// nothing there.
//
// Claims and deletes on a standard queue without message groups run the plain
// statements, which only probe (one partial-index probe) for a message with a group and
// report it: the driver then runs the fair ones on that queue (groupedQueues) until a
// claim finds no group again. A queue's first grouped messages may so be claimed once
// without the fair order, and a gateway's first delete of them adds no processing time.
// A fair claim counts the in-flight messages by group and reads the processing-time
// leaders; while no group is noisy it claims as the plain one does. With noisy groups it reads the quiet groups' messages from the group
// index, in the ranges between the noisy groups, so the noisy backlog is never scanned;
// messages without a group among the fairUngroupedScan never received that have
// been visible longest; then each
// noisy group's messages in turn.

// fairNoisySQL defines, after a CTE q with id and cutoff and with $2 the time, the CTEs
// grouped (is there a message with a group), infl (in-flight messages by group) and nz:
// the noisy groups with their in-flight counts.
const fairNoisySQL = `fg AS (
	SELECT EXISTS (SELECT 1 FROM messages g WHERE g.queue_id = (SELECT id FROM q) AND g.group_id IS NOT NULL) AS grouped
),
infl AS (
	SELECT m.group_id, count(*) AS n FROM messages m
	WHERE (SELECT grouped FROM fg) AND m.queue_id = (SELECT id FROM q) AND m.receipt IS NOT NULL AND m.visible_at > $2
	GROUP BY m.group_id
),
nz AS (
	SELECT s.group_id, coalesce((SELECT i.n FROM infl i WHERE i.group_id = s.group_id), 0) AS n FROM (
		SELECT i.group_id FROM infl i
		WHERE i.group_id IS NOT NULL AND i.n >= 30 AND i.n * 10 > (SELECT sum(t.n) FROM infl t)
		UNION
		SELECT f.group_id FROM fair_time f
		WHERE (SELECT grouped FROM fg) AND f.queue_id = (SELECT id FROM q) AND f.group_id <> ''
			AND f.rank > (SELECT t.rank FROM fair_time t WHERE t.queue_id = f.queue_id AND t.group_id = '') - 3.321928094887362
	) s
	WHERE (SELECT l.sent_at FROM messages l WHERE l.queue_id = (SELECT id FROM q) AND l.group_id = s.group_id
		ORDER BY l.id DESC LIMIT 1) > $2::timestamptz - interval '5 minutes'
)`

// fairUngroupedScan bounds the messages never received, visible longest, that a claim
// with noisy groups reads for messages without a group: they have no index of their own.
const fairUngroupedScan = 200

// fairCandidates are a standard claim's candidates: the longest visible first, fresh
// sends and returned messages (c1, c2), while no group is noisy; else the quiet tenants' messages, then the
// noisy groups' in order.
var fairCandidates = fairNoisySQL + `,
ns AS (SELECT array_agg(nz.group_id ORDER BY nz.group_id) AS a FROM nz),
` + standardCandidatesSQL("(SELECT a FROM ns) IS NULL AND", "cs") + `,
fq AS (
	SELECT x.* FROM generate_series(1, cardinality((SELECT a FROM ns))) i CROSS JOIN LATERAL (
		SELECT m.ctid, m.id, m.receive_count FROM messages m
		WHERE m.queue_id = (SELECT id FROM q) AND m.group_id < (SELECT a FROM ns)[i]
			AND m.group_id > coalesce((SELECT a FROM ns)[i - 1], '')
			AND m.visible_at <= $2 AND m.enqueued_at > (SELECT cutoff FROM q)
		LIMIT $3 FOR UPDATE OF m SKIP LOCKED) x
),
fl AS (
	SELECT m.ctid, m.id, m.receive_count FROM messages m
	WHERE (SELECT a FROM ns) IS NOT NULL
		AND m.queue_id = (SELECT id FROM q) AND m.group_id > (SELECT a FROM ns)[cardinality((SELECT a FROM ns))]
		AND m.visible_at <= $2 AND m.enqueued_at > (SELECT cutoff FROM q)
	LIMIT $3 FOR UPDATE OF m SKIP LOCKED
),
fu AS (
	SELECT m.ctid, m.id, m.receive_count FROM messages m
	WHERE m.ctid = ANY (ARRAY(
			SELECT o.ctid FROM messages o
			WHERE (SELECT a FROM ns) IS NOT NULL
				AND o.queue_id = (SELECT id FROM q) AND o.visible_at <= $2 AND o.receipt IS NULL
				AND o.enqueued_at > (SELECT cutoff FROM q)
			ORDER BY o.visible_at LIMIT ` + itoa(fairUngroupedScan) + `))
		AND (SELECT a FROM ns) IS NOT NULL AND m.group_id IS NULL AND m.visible_at <= $2
	LIMIT $3 FOR UPDATE OF m SKIP LOCKED
),
fn AS (
	SELECT x.* FROM (SELECT nz.group_id FROM nz ORDER BY nz.n, nz.group_id) g CROSS JOIN LATERAL (
		SELECT m.ctid, m.id, m.receive_count FROM messages m
		WHERE m.queue_id = (SELECT id FROM q) AND m.group_id = g.group_id
			AND m.visible_at <= $2 AND m.enqueued_at > (SELECT cutoff FROM q)
		LIMIT $3 FOR UPDATE OF m SKIP LOCKED) x
),
c AS (
	SELECT * FROM cs
	UNION ALL
	(SELECT * FROM (SELECT * FROM fq UNION ALL SELECT * FROM fl UNION ALL SELECT * FROM fu UNION ALL SELECT * FROM fn) f LIMIT $3)
)`

// fairTimeSQL adds, after a CTE del of deleted rows (group_id, received_at, visible_at)
// and with $5 the time, the processing time of the in-flight ones to fair_time: per
// group, and to the total when the queue has groups. Rows are written in group order,
// so concurrent deletes cannot deadlock.
const fairTimeSQL = `
pt AS (
	SELECT coalesce(del.group_id, '') AS g, sum(extract(epoch FROM $5::timestamptz - del.received_at))::float8 AS secs FROM del
	WHERE NOT (SELECT fifo FROM q) AND del.visible_at > $5 AND del.received_at < $5
	GROUP BY 1
),
ptw AS (
	SELECT g, secs FROM pt WHERE g <> ''
	UNION ALL
	SELECT '', sum(secs) FROM pt HAVING count(*) > 0
),
fw AS (
	INSERT INTO fair_time AS f (queue_id, group_id, rank)
	SELECT (SELECT id FROM q), p.g, ln(p.secs) / ln(2) + extract(epoch FROM $5::timestamptz) / 60 FROM ptw p
	WHERE EXISTS (SELECT 1 FROM pt WHERE pt.g <> '')
		OR EXISTS (SELECT 1 FROM fair_time x WHERE x.queue_id = (SELECT id FROM q) AND x.group_id = '')
	ORDER BY p.g
	ON CONFLICT (queue_id, group_id) DO UPDATE SET rank = ln(
		power(2::float8, greatest(f.rank - extract(epoch FROM $5::timestamptz) / 60, -1000)) +
		power(2::float8, excluded.rank - extract(epoch FROM $5::timestamptz) / 60)) / ln(2) + extract(epoch FROM $5::timestamptz) / 60
	RETURNING 1
)`

// fairStatsSQL counts a standard queue's groups with messages, and the noisy ones with a
// visible message (a noisy group with none holds nothing back).
var fairStatsSQL = `WITH q AS (
	SELECT id, $2::timestamptz - make_interval(secs => retention) AS cutoff FROM queues WHERE name = $1 AND NOT fifo
),
` + fairNoisySQL + `
SELECT (SELECT count(DISTINCT m.group_id) FROM messages m WHERE m.queue_id = (SELECT id FROM q) AND m.group_id IS NOT NULL),
	(SELECT count(*) FROM nz WHERE EXISTS (SELECT 1 FROM messages m
		WHERE m.queue_id = (SELECT id FROM q) AND m.group_id = nz.group_id AND m.visible_at <= $2
			AND m.enqueued_at > (SELECT cutoff FROM q)))`

// groupedQueues are the standard queues on which this driver last saw a message with a
// group, whose claims and deletes run the fair statements.
type groupedQueues struct {
	mu     sync.Mutex
	queues map[string]bool
}

func (g *groupedQueues) grouped(name string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.queues[name]
}

func (g *groupedQueues) set(name string, grouped bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if grouped {
		if g.queues == nil {
			g.queues = map[string]bool{}
		}
		g.queues[name] = true
	} else {
		delete(g.queues, name)
	}
}
