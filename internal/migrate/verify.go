package migrate

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"sort"
	"strings"

	"github.com/anysqs/anysqs/drivers"
)

// VerifyResult compares one queue's messages at both ends: the source's (copy) or the
// journal's record of what was moved (move) against the destination's.
type VerifyResult struct {
	Queue string
	// Expected is the source's message count (copy) or the moved count (move); Found the
	// destination's count of those messages (copy: all of its messages).
	Expected, Found int
	// ExpectedSum and FoundSum are SHA-256 over the sorted per-message digests (message
	// id, body, group and deduplication id, attributes).
	ExpectedSum, FoundSum string
	// Missing: expected ids the destination lacks; Changed: ids whose content differs;
	// Extra: ids the destination has that were not expected, or has more than once.
	Missing, Changed, Extra []string
}

// Equal reports whether both ends agree.
func (v VerifyResult) Equal() bool {
	return v.Expected == v.Found && v.ExpectedSum == v.FoundSum &&
		len(v.Missing)+len(v.Changed)+len(v.Extra) == 0
}

func (v VerifyResult) String() string {
	if v.Equal() {
		return fmt.Sprintf("%s: ok, %d messages, sha256 %s", v.Queue, v.Found, v.FoundSum[:16])
	}
	return fmt.Sprintf("%s: DIFFERENT: expected %d (sha256 %s), found %d (sha256 %s); missing %d%s, changed %d%s, extra or repeated %d%s",
		v.Queue, v.Expected, short(v.ExpectedSum), v.Found, short(v.FoundSum),
		len(v.Missing), some(v.Missing), len(v.Changed), some(v.Changed), len(v.Extra), some(v.Extra))
}

func short(s string) string { return s[:min(16, len(s))] }

func some(ids []string) string {
	if len(ids) == 0 {
		return ""
	}
	return " (" + strings.Join(ids[:min(5, len(ids))], ", ") + ")"
}

// digest is a message's content checksum: what a migration must carry unchanged.
func digest(m drivers.Message) string {
	h := sha256.New()
	field := func(s string) {
		fmt.Fprintf(h, "%d:%s", len(s), s)
	}
	field(m.MessageID)
	field(m.Body)
	field(m.MessageGroupID)
	field(m.MessageDeduplicationID)
	for _, attrs := range []map[string]drivers.MessageAttribute{m.Attributes, m.SystemAttributes} {
		names := make([]string, 0, len(attrs))
		for n := range attrs {
			names = append(names, n)
		}
		sort.Strings(names)
		field(fmt.Sprint(len(names)))
		for _, n := range names {
			a := attrs[n]
			field(n)
			field(a.DataType)
			field(a.StringValue)
			field(string(a.BinaryValue))
		}
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

func sumOf(digests []string) string {
	sorted := append([]string(nil), digests...)
	sort.Strings(sorted)
	h := sha256.New()
	for _, d := range sorted {
		h.Write([]byte(d))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// verify compares every migrated queue.
func (m *migration) verify(ctx context.Context, queues []QueueReport) ([]VerifyResult, error) {
	var out []VerifyResult
	for _, q := range queues {
		if q.Refused != "" {
			continue
		}
		expected := map[string]string{}
		if m.o.Mode == Move {
			m.j.view(func(s *journalState) {
				if qj := s.queues[q.Name]; qj != nil {
					for id, sum := range qj.sent {
						expected[id] = sum
					}
				}
			})
		} else {
			err := browse(ctx, m.o.From.Driver, q.Name, m.o.Now, func(b drivers.BrowsedMessage) bool {
				expected[b.MessageID] = digest(b.Message)
				return true
			})
			if err != nil {
				return nil, fmt.Errorf("verify: source: queue %s: %w", q.Name, err)
			}
		}
		found := map[string][]string{}
		err := browse(ctx, m.o.To.Driver, q.Name, m.o.Now, func(b drivers.BrowsedMessage) bool {
			if _, ok := expected[b.MessageID]; ok || m.o.Mode == Copy {
				found[b.MessageID] = append(found[b.MessageID], digest(b.Message))
			}
			return true
		})
		if err != nil {
			return nil, fmt.Errorf("verify: destination: queue %s: %w", q.Name, err)
		}
		out = append(out, compare(q.Name, expected, found))
	}
	return out, nil
}

func compare(queue string, expected map[string]string, found map[string][]string) VerifyResult {
	v := VerifyResult{Queue: queue, Expected: len(expected)}
	var exp, got []string
	for id, sum := range expected {
		exp = append(exp, sum)
		sums := found[id]
		switch {
		case len(sums) == 0:
			v.Missing = append(v.Missing, id)
		case sums[0] != sum:
			v.Changed = append(v.Changed, id)
		}
	}
	for id, sums := range found {
		v.Found += len(sums)
		got = append(got, sums...)
		if _, ok := expected[id]; !ok || len(sums) > 1 {
			v.Extra = append(v.Extra, id)
		}
	}
	sort.Strings(v.Missing)
	sort.Strings(v.Changed)
	sort.Strings(v.Extra)
	v.ExpectedSum, v.FoundSum = sumOf(exp), sumOf(got)
	return v
}
