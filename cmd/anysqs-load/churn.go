package main

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"
	"github.com/jackc/pgx/v5"
)

// The churn mode is a PostgreSQL soak (make soak-postgres): --workers workers repeat full
// send → receive → delete cycles on one Standard queue through the gateway, closed loop,
// for --duration. From --hold-from for --hold-for a transaction stays open on a
// connection of its own (REPEATABLE READ, with a transaction id and a snapshot: it holds
// back the xmin horizon, so no vacuum can remove the rows deleted meanwhile); then it is
// rolled back. Every --interval one row: throughput, receive latency, errors, and the
// messages table's size, its indexes' and its live and dead tuples as PostgreSQL reports
// them. At the end the rows again and one line per phase (before, held, after), as
// Markdown; --json writes the rows as they come.

// churnOptions are the churn mode's flags.
type churnOptions struct {
	holdFrom, holdFor, interval time.Duration
	jsonOut                     string
}

// churnIndexes are the messages table's indexes (drivers/postgres/schema.go), in the
// order the index table shows them; others found are appended by name.
var churnIndexes = []string{"messages_pkey", "messages_visible", "messages_returned", "messages_group", "messages_group_hidden"}

// churnEvent is a moment of the run: the end of a row's window, the start or the end of
// the held transaction, or the end of the run (which also closes the last window).
type churnEvent struct {
	at   time.Duration // since the start
	kind churnEventKind
}

type churnEventKind int

// In this order when they fall on the same moment: a window closes (and PostgreSQL is
// sampled) before the hold starts or ends, so a row describes its window only.
const (
	eventWindow churnEventKind = iota
	eventHold
	eventRelease
	eventEnd
)

// churnEvents is the run's schedule: a window every interval (the last one cut at
// duration), and the hold's start and end where they fall inside the run.
func churnEvents(duration, interval, holdFrom, holdFor time.Duration) []churnEvent {
	var ev []churnEvent
	for t := interval; t < duration; t += interval {
		ev = append(ev, churnEvent{t, eventWindow})
	}
	if holdFor > 0 && holdFrom < duration {
		ev = append(ev, churnEvent{holdFrom, eventHold})
		if end := holdFrom + holdFor; end < duration {
			ev = append(ev, churnEvent{end, eventRelease})
		}
	}
	ev = append(ev, churnEvent{duration, eventEnd})
	slices.SortStableFunc(ev, func(a, b churnEvent) int {
		return cmp.Or(cmp.Compare(a.at, b.at), cmp.Compare(a.kind, b.kind))
	})
	return ev
}

// churnPhase is a span of the run with the transaction held or not.
type churnPhase struct {
	name       string // before, held, after
	from, to   time.Duration
	holdActive bool
}

// churnPhases splits the run at the hold's start and end; empty phases are left out.
func churnPhases(duration, holdFrom, holdFor time.Duration) []churnPhase {
	if holdFor <= 0 || holdFrom >= duration {
		return []churnPhase{{name: "no hold", from: 0, to: duration}}
	}
	end := min(duration, holdFrom+holdFor)
	var out []churnPhase
	for _, p := range []churnPhase{{"before", 0, holdFrom, false}, {"held", holdFrom, end, true}, {"after", end, duration, false}} {
		if p.to > p.from {
			out = append(out, p)
		}
	}
	return out
}

// heldLabel says whether the transaction was held during the window [from, to): "yes"
// for all of it, "part" for some, "no".
func heldLabel(from, to, holdFrom, holdFor time.Duration) string {
	if holdFor <= 0 {
		return "no"
	}
	lo, hi := max(from, holdFrom), min(to, holdFrom+holdFor)
	switch {
	case hi <= lo:
		return "no"
	case lo == from && hi == to:
		return "yes"
	}
	return "part"
}

// churnSpan collects what the workers did in one window or one phase.
type churnSpan struct {
	rec                 *recorder
	cycles, msgs, empty atomic.Int64
	start               time.Time
}

func newChurnSpan(start time.Time) *churnSpan { return &churnSpan{rec: newRecorder(), start: start} }

// pgSample is what PostgreSQL says about the messages table at the end of a window.
type pgSample struct {
	TableBytes   int64            `json:"table_bytes"`
	IndexesBytes int64            `json:"indexes_bytes"`
	Indexes      map[string]int64 `json:"indexes"`
	LiveTuples   int64            `json:"n_live_tup"`
	DeadTuples   int64            `json:"n_dead_tup"`
	Vacuums      int64            `json:"vacuums"` // vacuum_count + autovacuum_count
	XminAge      int64            `json:"oldest_xmin_age"`
	HolderState  string           `json:"holder_state,omitempty"`
	Err          string           `json:"error,omitempty"`
}

// churnRow is one window: what the workers achieved and what PostgreSQL held at its end.
type churnRow struct {
	From           float64 `json:"from_s"` // since the start
	To             float64 `json:"to_s"`
	Held           string  `json:"held"` // yes, part, no
	Cycles         int64   `json:"cycles"`
	Messages       int64   `json:"messages"`
	EmptyReceives  int64   `json:"empty_receives"`
	CyclesPerSec   float64 `json:"cycles_per_s"`
	MessagesPerSec float64 `json:"messages_per_s"`
	ReceiveP50Ms   float64 `json:"receive_p50_ms"`
	ReceiveP99Ms   float64 `json:"receive_p99_ms"`
	SendP99Ms      float64 `json:"send_p99_ms"`
	DeleteP99Ms    float64 `json:"delete_p99_ms"`
	Errors         int     `json:"errors"`
	FirstError     string  `json:"first_error,omitempty"`
	pgSample
}

// newChurnRow aggregates a window's calls, measured over elapsed, with PostgreSQL's
// sample taken at its end.
func newChurnRow(from, to time.Duration, held string, elapsed time.Duration, cycles, msgs, empty int64, rec *recorder, pg pgSample) churnRow {
	r := churnRow{From: from.Seconds(), To: to.Seconds(), Held: held, Cycles: cycles, Messages: msgs,
		EmptyReceives: empty, pgSample: pg}
	if s := elapsed.Seconds(); s > 0 {
		r.CyclesPerSec, r.MessagesPerSec = float64(cycles)/s, float64(msgs)/s
	}
	recv := rec.dist("receive")
	r.ReceiveP50Ms, r.ReceiveP99Ms = msf(recv.p50), msf(recv.p99)
	r.SendP99Ms, r.DeleteP99Ms = msf(rec.dist("send").p99), msf(rec.dist("delete").p99)
	r.Errors, r.FirstError = rec.errors()
	return r
}

// minutes renders seconds since the start as minutes, to two decimals at most: 1, 1.5,
// 0.08.
func minutes(s float64) string {
	return strconv.FormatFloat(math.Round(s/60*100)/100, 'f', -1, 64)
}

func mib(b int64) string { return fmt.Sprintf("%.1f", float64(b)/(1<<20)) }

const churnHeader = "| minute | held | cycles/s (messages/s) | receive p50 / p99 ms | errors | table MiB | indexes MiB | n_live_tup | n_dead_tup | vacuums | oldest xmin age |\n" +
	"|---:|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"

// churnLine renders one row of churnHeader's table.
func churnLine(r churnRow) string {
	errs := strconv.Itoa(r.Errors)
	if r.Errors > 0 {
		errs = errText(r.Errors, r.FirstError)
	}
	if r.pgSample.Err != "" {
		errs += " (stats: " + strings.ReplaceAll(r.pgSample.Err, "|", "/") + ")"
	}
	return fmt.Sprintf("| %s | %s | %.0f (%.0f) | %.2f / %.2f | %s | %s | %s | %d | %d | %d | %d |\n",
		minutes(r.To), r.Held, r.CyclesPerSec, r.MessagesPerSec, r.ReceiveP50Ms, r.ReceiveP99Ms, errs,
		mib(r.TableBytes), mib(r.IndexesBytes), r.LiveTuples, r.DeadTuples, r.Vacuums, r.XminAge)
}

// indexTable renders each index's size per row, MiB: churnIndexes first, then any other
// index found, by name.
func indexTable(w io.Writer, rows []churnRow) {
	names := slices.Clone(churnIndexes)
	var extra []string
	for _, r := range rows {
		for n := range r.Indexes {
			if !slices.Contains(names, n) && !slices.Contains(extra, n) {
				extra = append(extra, n)
			}
		}
	}
	slices.Sort(extra)
	names = append(names, extra...)
	fmt.Fprintf(w, "| minute | held | %s |\n|---:|---|%s\n", strings.Join(names, " | "), strings.Repeat("---:|", len(names)))
	for _, r := range rows {
		cells := make([]string, len(names))
		for i, n := range names {
			if b, ok := r.Indexes[n]; ok {
				cells[i] = mib(b)
			} else {
				cells[i] = "–"
			}
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", minutes(r.To), r.Held, strings.Join(cells, " | "))
	}
}

// phaseSummary is one phase's totals: its calls (all of them, not a mean of windows) and
// how far the table grew during it, from the rows that end inside it.
type phaseSummary struct {
	Phase          string  `json:"phase"`
	From           float64 `json:"from_s"`
	To             float64 `json:"to_s"`
	MessagesPerSec float64 `json:"messages_per_s"`
	ReceiveP50Ms   float64 `json:"receive_p50_ms"`
	ReceiveP99Ms   float64 `json:"receive_p99_ms"`
	Errors         int     `json:"errors"`
	TableGrowth    int64   `json:"table_growth_bytes"`
	IndexesGrowth  int64   `json:"indexes_growth_bytes"`
	DeadAtEnd      int64   `json:"n_dead_tup_at_end"`
}

// newPhaseSummary sums up phase p from its calls (rec, msgs over elapsed) and the rows:
// growth is from the last row ending at or before the phase's start (zero at the run's
// start) to the last row ending at or before its end.
func newPhaseSummary(p churnPhase, elapsed time.Duration, msgs int64, rec *recorder, rows []churnRow) phaseSummary {
	s := phaseSummary{Phase: p.name, From: p.from.Seconds(), To: p.to.Seconds()}
	if elapsed > 0 {
		s.MessagesPerSec = float64(msgs) / elapsed.Seconds()
	}
	d := rec.dist("receive")
	s.ReceiveP50Ms, s.ReceiveP99Ms = msf(d.p50), msf(d.p99)
	s.Errors, _ = rec.errors()
	var before, end *churnRow
	for i := range rows {
		if rows[i].To <= s.From {
			before = &rows[i]
		}
		if rows[i].To <= s.To {
			end = &rows[i]
		}
	}
	if end != nil {
		s.DeadAtEnd = end.DeadTuples
		s.TableGrowth, s.IndexesGrowth = end.TableBytes, end.IndexesBytes
		if before != nil {
			s.TableGrowth -= before.TableBytes
			s.IndexesGrowth -= before.IndexesBytes
		}
	}
	return s
}

func phaseTable(w io.Writer, ps []phaseSummary) {
	fmt.Fprintln(w, "| phase | minutes | messages/s | receive p50 / p99 ms | errors | table growth MiB | indexes growth MiB | n_dead_tup at end |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|---:|---:|")
	for _, p := range ps {
		fmt.Fprintf(w, "| %s | %s–%s | %.0f | %.2f / %.2f | %d | %+.1f | %+.1f | %d |\n", p.Phase, minutes(p.From), minutes(p.To),
			p.MessagesPerSec, p.ReceiveP50Ms, p.ReceiveP99Ms, p.Errors,
			float64(p.TableGrowth)/(1<<20), float64(p.IndexesGrowth)/(1<<20), p.DeadAtEnd)
	}
}

// churnReport is what --json holds: the run's settings, every row so far, and at the
// end the phases.
type churnReport struct {
	Started  time.Time      `json:"started"`
	Workers  int            `json:"workers"`
	Batch    int            `json:"batch"`
	Duration float64        `json:"duration_s"`
	HoldFrom float64        `json:"hold_from_s"`
	HoldFor  float64        `json:"hold_for_s"`
	Interval float64        `json:"interval_s"`
	Schema   string         `json:"schema"`
	Rows     []churnRow     `json:"rows"`
	Phases   []phaseSummary `json:"phases,omitempty"`
}

func (r churnReport) write(file string) error {
	if file == "" {
		return nil
	}
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(b, '\n'), 0o644)
}

// pgStats samples the messages table of a schema on a connection of its own.
type pgStats struct {
	conn   *pgx.Conn
	schema string
}

func (s *pgStats) sample(ctx context.Context, holderPID uint32) pgSample {
	var p pgSample
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var holder *string
	err := s.conn.QueryRow(ctx, `
		SELECT pg_relation_size(c.oid), pg_indexes_size(c.oid),
			coalesce(st.n_live_tup, 0), coalesce(st.n_dead_tup, 0),
			coalesce(st.vacuum_count + st.autovacuum_count, 0),
			(SELECT coalesce(max(age(backend_xmin)), 0) FROM pg_stat_activity
				WHERE datname = current_database() AND pid <> pg_backend_pid()),
			(SELECT state FROM pg_stat_activity WHERE pid = $2)
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_stat_user_tables st ON st.relid = c.oid
		WHERE n.nspname = $1 AND c.relname = 'messages'`, s.schema, int64(holderPID)).
		Scan(&p.TableBytes, &p.IndexesBytes, &p.LiveTuples, &p.DeadTuples, &p.Vacuums, &p.XminAge, &holder)
	if err != nil {
		p.Err = err.Error()
		return p
	}
	if holder != nil {
		p.HolderState = *holder
	}
	rows, err := s.conn.Query(ctx, `
		SELECT i.relname, pg_relation_size(i.oid)
		FROM pg_index x JOIN pg_class i ON i.oid = x.indexrelid
		JOIN pg_class c ON c.oid = x.indrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = 'messages'`, s.schema)
	if err != nil {
		p.Err = err.Error()
		return p
	}
	p.Indexes = map[string]int64{}
	var name string
	var size int64
	_, err = pgx.ForEachRow(rows, []any{&name, &size}, func() error { p.Indexes[name] = size; return nil })
	if err != nil {
		p.Err = err.Error()
	}
	return p
}

// holder is the long transaction: REPEATABLE READ with a transaction id and a snapshot
// taken on the messages table, left idle in transaction until released.
type holder struct {
	conn *pgx.Conn
	txid int64
}

func hold(ctx context.Context, dsn, schema string) (*holder, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("hold: %w", err)
	}
	h := &holder{conn: conn}
	if _, err := conn.Exec(ctx, "BEGIN ISOLATION LEVEL REPEATABLE READ"); err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("hold: %w", err)
	}
	err = conn.QueryRow(ctx, "SELECT txid_current()").Scan(&h.txid)
	if err == nil {
		_, err = conn.Exec(ctx, "SELECT 1 FROM "+pgx.Identifier{schema, "messages"}.Sanitize()+" LIMIT 1")
	}
	if err != nil {
		conn.Close(context.Background())
		return nil, fmt.Errorf("hold: %w", err)
	}
	return h, nil
}

func (h *holder) pid() uint32 {
	if h == nil {
		return 0
	}
	return h.conn.PgConn().PID()
}

func (h *holder) release() error {
	if h == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := h.conn.Exec(ctx, "ROLLBACK")
	h.conn.Close(ctx)
	return err
}

// runChurn is the churn mode.
func runChurn(ctx context.Context, w, logw io.Writer, o options, co churnOptions) error {
	if o.dsn == "" {
		return fmt.Errorf("--mode churn needs --dsn, the gateway's database, to hold a transaction and read the table's size")
	}
	if co.interval <= 0 || o.duration <= 0 || co.holdFrom < 0 || co.holdFor < 0 {
		return fmt.Errorf("--duration and --interval must be positive, --hold-from and --hold-for not negative")
	}
	statsConn, err := pgx.Connect(ctx, o.dsn)
	if err != nil {
		return fmt.Errorf("stats connection: %w", err)
	}
	defer statsConn.Close(context.Background())
	stats := &pgStats{conn: statsConn, schema: o.schema}

	p := newGatewayPath(o.endpoint, o.workers)
	q, err := p.Queue(ctx, "churn-"+uuid.NewString()[:8], false)
	if err != nil {
		return fmt.Errorf("create queue: %w", err)
	}
	phases := churnPhases(o.duration, co.holdFrom, co.holdFor)
	rep := churnReport{Started: time.Now().UTC(), Workers: o.workers, Batch: o.batch, Duration: o.duration.Seconds(),
		HoldFrom: co.holdFrom.Seconds(), HoldFor: co.holdFor.Seconds(), Interval: co.interval.Seconds(), Schema: o.schema}
	fmt.Fprintf(w, "### PostgreSQL churn: send → receive → delete, Standard queue, batch %d, %d workers\n\n", o.batch, o.workers)
	fmt.Fprintf(w, "%s, a transaction held open (REPEATABLE READ, txid_current(), idle in transaction) on another connection from minute %s to %s, then rolled back; every %s: throughput, receive latency, and schema %s's messages table as PostgreSQL reports it.\n\n",
		o.duration, minutes(co.holdFrom.Seconds()), minutes(min(o.duration, co.holdFrom+co.holdFor).Seconds()), co.interval, o.schema)
	fmt.Fprint(w, churnHeader)

	start := time.Now()
	var window, phase atomic.Pointer[churnSpan]
	window.Store(newChurnSpan(start))
	phase.Store(newChurnSpan(start))
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	body := strings.Repeat("m", o.bodySize)
	for range o.workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			bodies := make([]string, o.batch)
			for i := range bodies {
				bodies[i] = body
			}
			// Each call is counted in the window and the phase in which it ends.
			call := func(name string, f func() error) error {
				t := time.Now()
				err := f()
				if err != nil && wctx.Err() != nil {
					return err
				}
				d := time.Since(t)
				window.Load().rec.add(name, d, err)
				phase.Load().rec.add(name, d, err)
				return err
			}
			for wctx.Err() == nil {
				if call("send", func() error { return p.Send(wctx, q, bodies, nil) }) != nil {
					continue
				}
				var hs []string
				if call("receive", func() (err error) { hs, err = p.Receive(wctx, q, o.batch); return err }) != nil {
					continue
				}
				if len(hs) == 0 {
					window.Load().empty.Add(1)
					phase.Load().empty.Add(1)
					continue
				}
				if call("delete", func() error { return p.Delete(wctx, q, hs) }) == nil {
					for _, s := range []*churnSpan{window.Load(), phase.Load()} {
						s.cycles.Add(1)
						s.msgs.Add(int64(len(hs)))
					}
				}
			}
		}()
	}

	var h *holder
	defer func() { _ = h.release() }()
	var summaries []phaseSummary
	phaseIdx := 0
	closePhase := func(now time.Time) {
		sp := phase.Swap(newChurnSpan(now))
		if phaseIdx < len(phases) {
			summaries = append(summaries, newPhaseSummary(phases[phaseIdx], now.Sub(sp.start), sp.msgs.Load(), sp.rec, rep.Rows))
			phaseIdx++
		}
	}
	var runErr error
	lastWindow := time.Duration(0)
events:
	for _, ev := range churnEvents(o.duration, co.interval, co.holdFrom, co.holdFor) {
		t := time.NewTimer(time.Until(start.Add(ev.at)))
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			runErr = ctx.Err()
			break events
		}
		now := time.Now()
		switch ev.kind {
		case eventWindow, eventEnd:
			sp := window.Swap(newChurnSpan(now))
			pg := stats.sample(ctx, h.pid())
			if h != nil && pg.Err == "" && pg.HolderState != "idle in transaction" {
				pg.Err = fmt.Sprintf("held transaction's connection is %q", pg.HolderState)
			}
			row := newChurnRow(lastWindow, ev.at, heldLabel(lastWindow, ev.at, co.holdFrom, co.holdFor),
				now.Sub(sp.start), sp.cycles.Load(), sp.msgs.Load(), sp.empty.Load(), sp.rec, pg)
			lastWindow = ev.at
			rep.Rows = append(rep.Rows, row)
			fmt.Fprint(w, churnLine(row))
			if err := rep.write(co.jsonOut); err != nil {
				return err
			}
			if ev.kind == eventEnd {
				stop()
				closePhase(now)
			}
		case eventHold:
			closePhase(now)
			if h, err = hold(ctx, o.dsn, o.schema); err != nil {
				runErr = err
				break events
			}
			fmt.Fprintf(logw, "churn: minute %s: holding transaction %d open on backend %d\n", minutes(ev.at.Seconds()), h.txid, h.pid())
		case eventRelease:
			closePhase(now)
			err := h.release()
			h = nil
			if err != nil {
				runErr = err
				break events
			}
			fmt.Fprintf(logw, "churn: minute %s: released the held transaction\n", minutes(ev.at.Seconds()))
		}
	}
	stop()
	wg.Wait()
	if runErr != nil {
		return runErr
	}
	rep.Phases = summaries
	if err := rep.write(co.jsonOut); err != nil {
		return err
	}
	fmt.Fprintf(w, "\n#### Per %s\n\n", co.interval)
	fmt.Fprint(w, churnHeader)
	for _, r := range rep.Rows {
		fmt.Fprint(w, churnLine(r))
	}
	fmt.Fprintf(w, "\n#### Index sizes, MiB\n\n")
	indexTable(w, rep.Rows)
	fmt.Fprintf(w, "\n#### By phase\n\n")
	phaseTable(w, summaries)
	fmt.Fprintln(w)
	return nil
}
