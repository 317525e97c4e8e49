package main

import (
	"fmt"
	"io"
)

// targets are the throughput targets for Standard queues: the gateway path's rate as a
// share of plain SQL's in the same run (docs/performance.md).
var targets = map[int]float64{10: 0.60, 1: 0.50}

// budgetRound sets one round's gateway path against its plain SQL path. On cores that are
// all busy, rates go as the inverse of CPU per message, so a target on the rate is a
// ceiling on the gateway path's CPU per message; what the SDK, PostgreSQL and the kernel
// take of it is not the gateway process's to save, and the rest is what the gateway
// process may spend.
type budgetRound struct {
	cfg       closedConfig
	round     int
	rateShare float64 // the gateway path's messages/s over plain SQL's
	sql       float64 // plain SQL's CPU per message, µs
	total, gw float64 // the gateway path's, and the gateway process's part of it
	sqlIdle   float64 // the cores' idle share on each path
	totalIdle float64
}

func newBudgetRound(cfg closedConfig, round int, sql, gw closedResult, haveGateway bool) (budgetRound, bool) {
	if cfg.fifo || !haveGateway || sql.cpu == nil || gw.cpu == nil || sql.msgs == 0 || gw.msgs == 0 {
		return budgetRound{}, false
	}
	us := func(sec float64, msgs int64) float64 { return sec * 1e6 / float64(msgs) }
	b := budgetRound{cfg: cfg, round: round, rateShare: gw.rate() / sql.rate(),
		sql: us(sql.cpu.busy(), sql.msgs), total: us(gw.cpu.busy(), gw.msgs), gw: us(gw.cpu.gateway, gw.msgs),
		sqlIdle: sql.cpu.idle / (sql.cpu.busy() + sql.cpu.idle), totalIdle: gw.cpu.idle / (gw.cpu.busy() + gw.cpu.idle)}
	return b, true
}

// target is the rate share the batch size is held to, if it has one.
func (b budgetRound) target() (float64, bool) {
	t, ok := targets[b.cfg.batch]
	return t, ok
}

// rest is the gateway path's CPU per message outside the gateway process.
func (b budgetRound) rest() float64 { return b.total - b.gw }

// costShare is plain SQL's CPU per message over the gateway path's: the rate share the
// two would have with the cores equally busy.
func (b budgetRound) costShare() float64 { return b.sql / b.total }

// freeGateway is the rate share a gateway process that cost nothing would reach, the rest
// unchanged.
func (b budgetRound) freeGateway() float64 { return b.sql / b.rest() }

// perCall turns a cost per message into one per API call: a cycle of batch messages is
// three calls.
func (b budgetRound) perCall(us float64) float64 { return us * float64(b.cfg.batch) / 3 }

// allowed is the gateway process's CPU per API call at which the gateway path would meet
// target, the rest unchanged; negative when even a free gateway would not.
func (b budgetRound) allowed(target float64) float64 { return b.perCall(b.sql/target - b.rest()) }

func budgetTable(w io.Writer, rounds []budgetRound) {
	if len(rounds) == 0 {
		return
	}
	fmt.Fprintln(w, "### CPU budget: the gateway path against plain SQL")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "CPU per message in µs, from the closed loop above; \"rest\" is the gateway path's CPU outside the gateway process (the SDK, PostgreSQL, the kernel). \"Cost share\" is plain SQL's CPU per message over the gateway path's, the rate share at equally busy cores; \"free gateway\" is the share a gateway process costing nothing would reach; \"allowed\" is the gateway process's CPU per API call at which the target would be met, the rest unchanged.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| queue, batch | round | rate share | idle sql / gateway path | sql µs/msg | gateway path µs/msg | gateway process µs/msg | rest µs/msg | cost share | free gateway | target | gateway process µs/call: allowed / measured |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	row := func(b budgetRound, round string) {
		target, allowed := "–", "–"
		if t, ok := b.target(); ok {
			target = fmt.Sprintf("%.0f%%", 100*t)
			allowed = fmt.Sprintf("%.0f", b.allowed(t))
		}
		fmt.Fprintf(w, "| %s | %s | %.0f%% | %.0f%% / %.0f%% | %.0f | %.0f | %.0f | %.0f | %.0f%% | %.0f%% | %s | %s / %.0f |\n",
			b.cfg, round, 100*b.rateShare, 100*b.sqlIdle, 100*b.totalIdle, b.sql, b.total, b.gw, b.rest(),
			100*b.costShare(), 100*b.freeGateway(), target, allowed, b.perCall(b.gw))
	}
	var group []budgetRound
	flush := func() {
		if len(group) > 1 {
			row(medianBudget(group), "median")
		}
		group = nil
	}
	for i, b := range rounds {
		if i > 0 && rounds[i-1].cfg.String() != b.cfg.String() {
			flush()
		}
		row(b, fmt.Sprint(b.round))
		group = append(group, b)
	}
	flush()
	fmt.Fprintln(w)
}

// medianBudget takes the median of each measured figure over rounds; the derived columns
// are then computed from those medians.
func medianBudget(rounds []budgetRound) budgetRound {
	pick := func(f func(budgetRound) float64) float64 {
		v := make([]float64, len(rounds))
		for i, b := range rounds {
			v[i] = f(b)
		}
		return median(v)
	}
	m := rounds[0]
	m.rateShare = pick(func(b budgetRound) float64 { return b.rateShare })
	m.sql = pick(func(b budgetRound) float64 { return b.sql })
	m.total = pick(func(b budgetRound) float64 { return b.total })
	m.gw = pick(func(b budgetRound) float64 { return b.gw })
	m.sqlIdle = pick(func(b budgetRound) float64 { return b.sqlIdle })
	m.totalIdle = pick(func(b budgetRound) float64 { return b.totalIdle })
	return m
}
