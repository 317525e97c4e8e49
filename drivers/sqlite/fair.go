package sqlite

import (
	"context"
	"sort"
)

// Fair queues. On a standard queue a message group names a tenant. A group is noisy
// when it holds at least fairMinInFlight in-flight messages and more than a tenth of
// the queue's in-flight messages (SQS's published thresholds); a message without a
// group is a tenant of its own and never noisy. While some group is noisy, a receive
// hands out the other groups' visible messages first and the noisy groups' only to fill
// what is left, so a flood from one tenant does not hold back the quiet ones.

// fairMinInFlight is the in-flight count below which no group is noisy.
const fairMinInFlight = 30

// hasGroups is true when the standard queue holds a message with a group: only then is
// there a tenant to be fair to (one index probe).
const hasGroups = `SELECT EXISTS (SELECT 1 FROM messages INDEXED BY messages_group_seq
	WHERE queue_id = ? AND group_id > '')`

// inFlightByGroup counts the queue's in-flight messages per group, from the covering
// partial index of claimed messages.
const inFlightByGroup = `SELECT group_id, COUNT(*) FROM messages INDEXED BY messages_claimed
	WHERE queue_id = ? AND visible_at > ? AND token IS NOT NULL GROUP BY group_id`

// noisyGroups returns the standard queue's noisy groups at now, sorted.
func noisyGroups(ctx context.Context, tx conn, q queueRow, now int64) ([]string, error) {
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
	var noisy []string
	for g, n := range counts {
		if g != "" && n >= fairMinInFlight && n*10 > total {
			noisy = append(noisy, g)
		}
	}
	sort.Strings(noisy)
	return noisy, nil
}

// quietCandidates returns up to n receivable messages (?2 now, ?3 retention cutoff) of
// groups other than noisy (sorted), reading the group index between the noisy groups,
// so that the noisy backlog is never scanned.
func quietCandidates(ctx context.Context, tx conn, q queueRow, now, cutoff int64, n int, noisy []string) ([]msgRow, error) {
	var out []msgRow
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
		rows, err := tx.QueryContext(ctx, `SELECT `+msgCols+` FROM messages INDEXED BY messages_group_seq
			WHERE queue_id = ?1 AND `+cond+` AND visible_at <= ?2 AND enqueued_at > ?3 LIMIT ?4`, args...)
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			m, err := scanMsg(rows)
			if err != nil {
				rows.Close()
				return nil, err
			}
			out = append(out, m)
		}
		if err := rows.Close(); err != nil {
			return nil, err
		}
	}
	return out, nil
}
