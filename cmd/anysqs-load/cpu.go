package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// The closed loop is CPU-bound: the load generator, the gateway and PostgreSQL share the
// machine's cores, so a path's rate follows its CPU time per message. cpuMeter says where
// that time goes during a phase's measured window, from /proc (Linux only), so that every
// run shows how much of the gateway path's cost is the gateway process's own and how much
// is work any client of the SQS API would cause (the SDK, PostgreSQL, the kernel).

// clockTicks is USER_HZ, the unit of /proc's CPU times; 100 on every Linux architecture
// Go supports (sysconf(_SC_CLK_TCK) would need cgo).
const clockTicks = 100

// cpuMeter samples the CPU times of the gateway process (pid 0: none), of this process,
// of the local PostgreSQL server's processes and of the whole machine.
type cpuMeter struct {
	proc       string // /proc, or a test's fixture tree
	gatewayPID int
	// postgresPID, when set, is the postmaster whose server alone counts as PostgreSQL:
	// a server of the benchmark's own, beside a shared one that others keep busy.
	postgresPID int
}

// cpuSample is one reading, in clock ticks.
type cpuSample struct {
	gateway, self uint64
	postgres      map[int]uint64 // by pid
	busy, idle    uint64         // the whole machine, all cores
}

// cpuShare is where the CPU time of a window went, in seconds.
type cpuShare struct {
	gateway, client, postgres, other, idle float64
}

func (m *cpuMeter) sample() (cpuSample, error) {
	var s cpuSample
	var err error
	if s.busy, s.idle, err = m.machine(); err != nil {
		return s, err
	}
	if s.self, err = m.process("self"); err != nil {
		return s, err
	}
	if m.gatewayPID > 0 {
		if s.gateway, err = m.process(strconv.Itoa(m.gatewayPID)); err != nil {
			return s, fmt.Errorf("gateway process %d: %w", m.gatewayPID, err)
		}
		s.gateway += m.children(m.gatewayPID)
	}
	s.postgres = map[int]uint64{}
	comms, _ := filepath.Glob(filepath.Join(m.proc, "[0-9]*", "comm"))
	for _, c := range comms {
		// PostgreSQL names its processes "postgres" (postmaster and backends alike); a
		// process that ends between the glob and the read is simply skipped.
		if b, err := os.ReadFile(c); err != nil || strings.TrimSpace(string(b)) != "postgres" {
			continue
		}
		dir := filepath.Base(filepath.Dir(c))
		pid, _ := strconv.Atoi(dir)
		if m.postgresPID > 0 && pid != m.postgresPID && m.parent(dir) != m.postgresPID {
			continue
		}
		if t, err := m.process(dir); err == nil {
			s.postgres[pid] = t
		}
	}
	return s, nil
}

// children sums the CPU times of pid's child processes: a gateway's driver plugin works
// for the gateway. A child that ends between the glob and the read is skipped.
func (m *cpuMeter) children(pid int) uint64 {
	var sum uint64
	stats, _ := filepath.Glob(filepath.Join(m.proc, "[0-9]*", "stat"))
	for _, st := range stats {
		b, err := os.ReadFile(st)
		if err != nil {
			continue
		}
		i := strings.LastIndexByte(string(b), ')')
		if f := strings.Fields(string(b[i+1:])); i < 0 || len(f) < 2 || f[1] != strconv.Itoa(pid) {
			continue
		}
		if t, err := m.process(filepath.Base(filepath.Dir(st))); err == nil {
			sum += t
		}
	}
	return sum
}

// parent is the parent process id of pid, 0 if unknown.
func (m *cpuMeter) parent(pid string) int {
	b, err := os.ReadFile(filepath.Join(m.proc, pid, "stat"))
	if err != nil {
		return 0
	}
	i := strings.LastIndexByte(string(b), ')')
	f := strings.Fields(string(b[i+1:]))
	if i < 0 || len(f) < 2 {
		return 0
	}
	n, _ := strconv.Atoi(f[1])
	return n
}

// process reads utime+stime of /proc/<pid>/stat. The command name (field 2) may hold
// spaces and parentheses, so fields are counted from its last ')'.
func (m *cpuMeter) process(pid string) (uint64, error) {
	b, err := os.ReadFile(filepath.Join(m.proc, pid, "stat"))
	if err != nil {
		return 0, err
	}
	i := strings.LastIndexByte(string(b), ')')
	if i < 0 {
		return 0, errors.New("malformed stat")
	}
	// After ')': state is field 3, utime field 14, stime field 15.
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 13 {
		return 0, errors.New("short stat")
	}
	u, err1 := strconv.ParseUint(f[11], 10, 64)
	st, err2 := strconv.ParseUint(f[12], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return 0, err
	}
	return u + st, nil
}

// machine reads the busy and idle ticks of all cores from /proc/stat's first line:
// user nice system idle iowait irq softirq steal. Idle and iowait count as idle; steal
// (time the hypervisor gave to others) counts as neither.
func (m *cpuMeter) machine() (busy, idle uint64, err error) {
	b, err := os.ReadFile(filepath.Join(m.proc, "stat"))
	if err != nil {
		return 0, 0, err
	}
	line, _, _ := strings.Cut(string(b), "\n")
	f := strings.Fields(line)
	if len(f) < 8 || f[0] != "cpu" {
		return 0, 0, errors.New("malformed /proc/stat")
	}
	var v [7]uint64
	for i := range v {
		if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
			return 0, 0, err
		}
	}
	return v[0] + v[1] + v[2] + v[5] + v[6], v[3] + v[4], nil
}

// since is the CPU time spent between a and b. A PostgreSQL process seen only in b
// started during the window and counts from zero; one seen only in a ended during it and
// its last interval is lost (rare: every path opens its connections before the warm-up).
func (b cpuSample) since(a cpuSample) cpuShare {
	var pg uint64
	for pid, t := range b.postgres {
		if t0, ok := a.postgres[pid]; ok && t0 <= t {
			pg += t - t0
		} else if !ok {
			pg += t
		}
	}
	sec := func(t uint64) float64 { return float64(t) / clockTicks }
	sh := cpuShare{gateway: sec(b.gateway - a.gateway), client: sec(b.self - a.self), postgres: sec(pg),
		idle: sec(b.idle - a.idle)}
	sh.other = sec(b.busy-a.busy) - sh.gateway - sh.client - sh.postgres
	return sh
}

func (s cpuShare) busy() float64 { return s.gateway + s.client + s.postgres + s.other }

// perMessage renders the share as microseconds per message: gateway / client /
// PostgreSQL / other = total, and the cores' idle share.
func (s cpuShare) perMessage(msgs int64) string {
	if msgs <= 0 {
		return "–"
	}
	us := func(sec float64) float64 { return sec * 1e6 / float64(msgs) }
	return fmt.Sprintf("%.0f / %.0f / %.0f / %.0f = %.0f (%.0f%% idle)", us(s.gateway), us(s.client),
		us(s.postgres), us(s.other), us(s.busy()), 100*s.idle/(s.busy()+s.idle))
}
