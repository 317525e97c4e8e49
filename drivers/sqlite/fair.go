package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"math"
	"slices"
	"sort"
	"strconv"
	"time"
)

// Fair queues, as SQS specifies them. On a standard queue a message group names a
// tenant; a message without a group is a tenant of its own and never noisy. A group is
// noisy when either holds:
//   - concurrency share: it holds at least fairMinInFlight in-flight messages and more
//     than a tenth of the queue's in-flight messages;
//   - processing-time share: it took more than a tenth of the queue's recent processing
//     time, the time from a receive to the delete of the message received, decayed with
//     a half-life of fairHalfLife.
//
// A group stops being noisy once it has sent nothing for fairQuietAfter; its backlog
// drained, it has nothing to hold back. While some group is noisy, a receive hands out
// the other groups' visible messages first, then the noisy groups', the group with the
// fewest messages in flight first, so a flood or a slow tenant does not hold back the
// quiet ones.
//
// Processing time is kept in this process's memory (it is the only writer of the
// database): a restart forgets it, and the concurrency share decides alone until
// deletes have been seen again. Only deletes of in-flight messages count; a message whose
// visibility ran out or was set to 0 adds nothing.

// fairMinInFlight is the in-flight count below which no group is noisy by concurrency.
const fairMinInFlight = 30

// fairHalfLife is how fast processing time stops counting as recent.
const fairHalfLife = time.Minute

// fairQuietAfter is how long a group that sends nothing stays noisy.
const fairQuietAfter = 5 * time.Minute

// hasGroups is true when the standard queue holds a message with a group: only then is
// there a tenant to be fair to (one index probe).
const hasGroups = `SELECT EXISTS (SELECT 1 FROM messages INDEXED BY messages_group_seq
	WHERE queue_id = ? AND group_id <> '')`

// inFlightByGroup counts the queue's in-flight messages per group, from the covering
// partial index of claimed messages.
const inFlightByGroup = `SELECT group_id, COUNT(*) FROM messages INDEXED BY messages_claimed
	WHERE queue_id = ? AND visible_at > ? AND token IS NOT NULL GROUP BY group_id`

// lastSend is the send time of the group's newest message: the group index holds a
// standard queue's messages of one group in row order, so the last entry is the newest.
const lastSend = `SELECT sent_at FROM messages INDEXED BY messages_group_seq
	WHERE queue_id = ? AND group_id = ? AND group_id <> '' ORDER BY seq DESC, id DESC LIMIT 1`

// decayed is a sum of seconds that halves every fairHalfLife.
type decayed struct {
	v  float64
	at int64 // nanoseconds
}

func (x *decayed) value(now int64) float64 {
	if now <= x.at {
		return x.v
	}
	return x.v * math.Exp2(-float64(now-x.at)/float64(fairHalfLife))
}

func (x *decayed) add(now int64, secs float64) {
	x.v, x.at = x.value(now)+secs, max(now, x.at)
}

// fairTime is a standard queue's recent processing time, in total and per group.
type fairTime struct {
	total  decayed
	groups map[string]*decayed
}

// processed records that a message of group, received at receivedAt, was deleted at
// now.
func (d *Driver) processed(queueID int64, group string, receivedAt, now int64) {
	if receivedAt <= 0 || now <= receivedAt {
		return
	}
	secs := float64(now-receivedAt) / float64(time.Second)
	d.fairMu.Lock()
	defer d.fairMu.Unlock()
	ft := d.fair[queueID]
	if ft == nil {
		ft = &fairTime{groups: map[string]*decayed{}}
		d.fair[queueID] = ft
	}
	ft.total.add(now, secs)
	if group == "" {
		return // a message without a group is a tenant of its own, never noisy
	}
	g := ft.groups[group]
	if g == nil {
		if len(ft.groups) >= maxFairGroups {
			ft.prune(now)
		}
		g = &decayed{}
		ft.groups[group] = g
	}
	g.add(now, secs)
}

// maxFairGroups bounds the groups whose processing time a queue remembers; past it,
// those whose share has decayed below any threshold are forgotten.
const maxFairGroups = 10000

func (ft *fairTime) prune(now int64) {
	total := ft.total.value(now)
	for g, x := range ft.groups {
		if x.value(now) < total/1000 {
			delete(ft.groups, g)
		}
	}
}

// slowGroups returns the groups over a tenth of the queue's recent processing time.
func (d *Driver) slowGroups(queueID, now int64) []string {
	d.fairMu.Lock()
	defer d.fairMu.Unlock()
	ft := d.fair[queueID]
	if ft == nil {
		return nil
	}
	total := ft.total.value(now)
	if total <= 0 {
		return nil
	}
	var out []string
	for g, x := range ft.groups {
		if x.value(now)*10 > total {
			out = append(out, g)
		}
	}
	return out
}

// noisyGroups returns the standard queue's noisy groups at now, the fewest in flight
// first.
func (d *Driver) noisyGroups(ctx context.Context, tx queryer, q queueRow, now int64) ([]string, error) {
	var grouped bool
	if err := tx.QueryRowContext(ctx, hasGroups, q.id).Scan(&grouped); err != nil || !grouped {
		return nil, err
	}
	rows, err := tx.QueryContext(ctx, inFlightByGroup, q.id, now)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	counts := map[string]int64{}
	var total int64
	for rows.Next() {
		var g string
		var n int64
		if err := rows.Scan(&g, &n); err != nil {
			return nil, err
		}
		counts[g], total = n, total+n
	}
	if err := rows.Err(); err != nil {
		return nil, err
	}
	candidates := map[string]bool{}
	for g, n := range counts {
		if g != "" && n >= fairMinInFlight && n*10 > total {
			candidates[g] = true
		}
	}
	for _, g := range d.slowGroups(q.id, now) {
		candidates[g] = true
	}
	quietSince := now - int64(fairQuietAfter)
	var noisy []string
	for g := range candidates {
		var sent int64
		err := tx.QueryRowContext(ctx, lastSend, q.id, g).Scan(&sent)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, err
		}
		if err == nil && sent > quietSince {
			noisy = append(noisy, g)
		}
	}
	sort.Slice(noisy, func(i, j int) bool {
		a, b := noisy[i], noisy[j]
		return counts[a] < counts[b] || counts[a] == counts[b] && a < b
	})
	return noisy, nil
}

// groupStates counts the standard queue's groups with messages, noisy (with a visible
// message: a drained group holds nothing back) and quiet.
func (d *Driver) groupStates(ctx context.Context, db queryer, q queueRow, now int64) (noisy, quiet int64, err error) {
	var total int64
	if err := db.QueryRowContext(ctx, `SELECT COUNT(DISTINCT group_id) FROM messages INDEXED BY messages_group_seq
		WHERE queue_id = ? AND group_id <> ''`, q.id).Scan(&total); err != nil || total == 0 {
		return 0, 0, err
	}
	groups, err := d.noisyGroups(ctx, db, q, now)
	if err != nil {
		return 0, 0, err
	}
	cutoff := now - retentionNanos(q.attrs)
	for _, g := range groups {
		var backlog bool
		if err := db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM messages INDEXED BY messages_group_seq
			WHERE queue_id = ? AND group_id = ? AND group_id <> '' AND visible_at <= ? AND enqueued_at > ?)`, q.id, g, now, cutoff).Scan(&backlog); err != nil {
			return 0, 0, err
		}
		if backlog {
			noisy++
		}
	}
	return noisy, total - noisy, nil
}

// fairUngroupedScan bounds the messages visible longest among which a receive with
// noisy groups looks for messages without a group: the group index leaves them out.
const fairUngroupedScan = 200

// quietCandidates returns up to n receivable messages (?2 now, ?3 retention cutoff) of
// groups other than noisy, reading the group index between the noisy groups, so that
// the noisy backlog is never scanned, and messages without a group among the
// fairUngroupedScan visible longest.
func quietCandidates(ctx context.Context, tx conn, q queueRow, now, cutoff int64, n int, noisy []string) ([]msgRow, error) {
	noisy = slices.Clone(noisy)
	slices.Sort(noisy) // the index ranges between them
	out, err := readMsgs(ctx, tx, `SELECT `+msgCols+` FROM (SELECT `+msgCols+` FROM messages INDEXED BY messages_visible
		WHERE queue_id = ?1 AND visible_at <= ?2 AND enqueued_at > ?3 ORDER BY visible_at LIMIT `+strconv.Itoa(fairUngroupedScan)+`)
		WHERE group_id = '' LIMIT ?4`, q.id, now, cutoff, n)
	if err != nil {
		return nil, err
	}
	for i := 0; i <= len(noisy) && len(out) < n; i++ {
		cond, args := "", []any{q.id, now, cutoff, n - len(out)}
		switch {
		case i == 0:
			cond, args = "group_id < ?5", append(args, noisy[0])
		case i == len(noisy):
			cond, args = "group_id > ?5", append(args, noisy[i-1])
		default:
			cond, args = "group_id > ?5 AND group_id < ?6", append(args, noisy[i-1], noisy[i])
		}
		rows, err := readMsgs(ctx, tx, `SELECT `+msgCols+` FROM messages INDEXED BY messages_group_seq
			WHERE queue_id = ?1 AND group_id <> '' AND `+cond+` AND visible_at <= ?2 AND enqueued_at > ?3 LIMIT ?4`, args...)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}

// noisyCandidates returns up to n receivable messages of the noisy groups, taking them
// group by group in noisy's order (the fewest in flight first).
func noisyCandidates(ctx context.Context, tx conn, q queueRow, now, cutoff int64, n int, noisy []string) ([]msgRow, error) {
	var out []msgRow
	for _, g := range noisy {
		if len(out) >= n {
			break
		}
		rows, err := readMsgs(ctx, tx, `SELECT `+msgCols+` FROM messages INDEXED BY messages_group_seq
			WHERE queue_id = ?1 AND group_id = ?5 AND group_id <> '' AND visible_at <= ?2 AND enqueued_at > ?3 LIMIT ?4`,
			q.id, now, cutoff, n-len(out), g)
		if err != nil {
			return nil, err
		}
		out = append(out, rows...)
	}
	return out, nil
}
