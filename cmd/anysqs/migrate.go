package main

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/cli"
	"github.com/anysqs/anysqs/internal/config"
	"github.com/anysqs/anysqs/internal/migrate"
)

func runMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := cli.NewFlags("migrate", "--from FILE --to FILE [flags]", `Copy or move queues and their messages from one backend to another, both opened
in this process from gateway configuration files (docs/migration.md). Environment
overrides apply with a prefix per side: ANYSQS_FROM_BACKEND_OPTIONS for --from,
ANYSQS_TO_BACKEND_OPTIONS for --to, and so on for every ANYSQS_* variable.
A journal (--state) records progress: run the same command again to resume.`)
	from := fs.String("from", "", "configuration `FILE` of the source backend")
	to := fs.String("to", "", "configuration `FILE` of the destination backend")
	queues := fs.String("queues", "*", "glob `PATTERN` on queue names")
	mode := fs.String("mode", "copy", "copy (leave the source as it is) or move (delete at the source once sent)")
	inFlight := fs.String("in-flight", "wait", "in-flight messages: wait for them, skip them, or copy them now (copy mode; move: wait or skip)")
	verify := fs.Bool("verify", false, "compare counts and a content checksum per queue when done; exit 1 on a difference")
	queuesOnly := fs.Bool("queues-only", false, "create the queues at the destination and copy no message (switchover step 1)")
	strict := fs.Bool("strict", false, "refuse to start if the destination cannot keep something a source queue uses")
	state := fs.String("state", "migrate-state.json", "journal `FILE` (or directory) recording progress, for resuming")
	vt := fs.Duration("visibility-timeout", time.Minute, "how long a moving receive hides a message at the source (and how soon after a crash it returns)")
	workers := fs.Int("workers", 4, "concurrent batches per standard queue")
	if err := fs.ParseArgs(args, stdout); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	if *from == "" || *to == "" {
		return cli.Usagef("migrate: --from and --to are required (see anysqs migrate --help)")
	}
	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	srcCfg, err := loadSide(*from, "ANYSQS_FROM_")
	if err != nil {
		return fmt.Errorf("--from: %w", sideEnv(err, "ANYSQS_FROM_"))
	}
	dstCfg, err := loadSide(*to, "ANYSQS_TO_")
	if err != nil {
		return fmt.Errorf("--to: %w", sideEnv(err, "ANYSQS_TO_"))
	}
	for side, c := range map[string]config.Config{"--from": srcCfg, "--to": dstCfg} {
		if c.Routed() {
			return cli.Usagef("migrate: %s routes queues to several backends (backends:); give it a configuration with the one backend: to copy from or to", side)
		}
	}
	if srcCfg.Backend.Name == dstCfg.Backend.Name && reflect.DeepEqual(srcCfg.Backend.Options, dstCfg.Backend.Options) {
		return cli.Usagef("migrate: --from and --to name the same storage (backend %s with the same options)", srcCfg.Backend.Name)
	}
	src, err := openSide(ctx, srcCfg)
	if err != nil {
		return fmt.Errorf("--from: %w", sideEnv(err, "ANYSQS_FROM_"))
	}
	defer src.Close()
	dst, err := openSide(ctx, dstCfg)
	if err != nil {
		return fmt.Errorf("--to: %w", sideEnv(err, "ANYSQS_TO_"))
	}
	defer dst.Close()
	statePath := *state
	if fi, err := os.Stat(statePath); err == nil && fi.IsDir() {
		statePath = filepath.Join(statePath, "migrate-state.json")
	}
	prog := newProgressLine(stderr)
	log := slog.New(slog.NewTextHandler(prog, nil))
	start := time.Now()
	rep, err := migrate.Run(ctx, migrate.Options{
		From:     migrate.Endpoint{Driver: src, AccountID: srcCfg.AccountID, Region: srcCfg.Region, Storage: storageDigest(srcCfg)},
		To:       migrate.Endpoint{Driver: dst, AccountID: dstCfg.AccountID, Region: dstCfg.Region, Storage: storageDigest(dstCfg)},
		Queues:   *queues,
		Mode:     migrate.Mode(*mode),
		InFlight: migrate.InFlight(*inFlight),
		Verify:   *verify, Strict: *strict, QueuesOnly: *queuesOnly, StatePath: statePath,
		VisibilityTimeout: *vt, Workers: *workers,
		Progress: prog.update, Log: log, Hook: killHook(os.Getenv("ANYSQS_MIGRATE_KILL_AT")),
	})
	prog.finish()
	if err == nil || len(rep.Queues)+len(rep.Gaps) > 0 { // not when it failed before starting
		printReport(stdout, rep, time.Since(start))
	}
	return err
}

// loadSide loads one configuration file, with ANYSQS_* overrides read from prefix+*
// (one variable cannot mean both sides).
func loadSide(path, prefix string) (config.Config, error) {
	return config.Load(path, func(k string) string {
		return os.Getenv(prefix + strings.TrimPrefix(k, "ANYSQS_"))
	})
}

// sideEnv makes a configuration error about a value an environment variable set name
// the variable this side read: ANYSQS_FROM_LISTEN, not ANYSQS_LISTEN.
func sideEnv(err error, prefix string) error {
	var ce *config.Error
	if errors.As(err, &ce) && strings.HasPrefix(ce.From, "ANYSQS_") {
		ce.From = prefix + strings.TrimPrefix(ce.From, "ANYSQS_")
	}
	return err
}

// storageDigest names a configuration's storage in the journal without its secrets: a
// digest of the backend's options. Options that change while the storage stays (a
// rotated password in a DSN) make a new digest, and the journal is then refused: the
// message says how to go on.
func storageDigest(cfg config.Config) string {
	b, _ := json.Marshal(cfg.Backend.Options) // map keys sorted: the same options, the same digest
	sum := sha256.Sum256(b)
	return "options:" + hex.EncodeToString(sum[:6])
}

// openSide opens a configuration's backend.
func openSide(ctx context.Context, cfg config.Config) (drivers.Driver, error) {
	drv, err := drivers.Open(ctx, cfg.Backend.Name, cfg.Backend.Options)
	if err != nil {
		var oe *drivers.OptionError
		if errors.As(err, &oe) {
			return nil, fmt.Errorf("%w (backend %s)", cfg.Locate("backend.options."+oe.Key, oe.Msg), cfg.Backend.Name)
		}
		return nil, fmt.Errorf("backend %s: %w", cfg.Backend.Name, err)
	}
	return drv, nil
}

func printReport(w io.Writer, rep migrate.Report, took time.Duration) {
	if rep.Resumed {
		fmt.Fprintln(w, "resumed from the state file")
	}
	if len(rep.Gaps) > 0 {
		fmt.Fprintf(w, "the destination cannot keep %d thing(s) the source queues use:\n", len(rep.Gaps))
		for _, g := range rep.Gaps {
			fmt.Fprintln(w, "  "+g.String())
		}
	}
	total := 0
	for _, q := range rep.Queues {
		total += q.Sent
		switch {
		case q.Refused != "":
			fmt.Fprintf(w, "queue %s: REFUSED: %s\n", q.Name, q.Refused)
		default:
			extra := ""
			if q.Existed {
				extra += ", queue existed"
			}
			if q.Skipped > 0 {
				extra += fmt.Sprintf(", %d in flight skipped", q.Skipped)
			}
			if q.Resolved > 0 {
				extra += fmt.Sprintf(", %d interrupted sends found at the destination", q.Resolved)
			}
			fmt.Fprintf(w, "queue %s: %d messages sent%s\n", q.Name, q.Sent, extra)
		}
	}
	for _, v := range rep.Verify {
		fmt.Fprintln(w, "verify "+v.String())
	}
	rate := 0.0
	if s := took.Seconds(); s > 0 {
		rate = float64(total) / s
	}
	fmt.Fprintf(w, "%d messages in %s (%.0f messages/s)\n", total, took.Round(time.Millisecond), rate)
	fmt.Fprintf(w, "at most %d messages may be duplicated at the destination", rep.MayDuplicate)
	if n := rep.MayDuplicateIfConsumed; n > 0 {
		fmt.Fprintf(w, " (%d of them only if a consumer there received the first copy before the resume looked for it)", n)
	}
	fmt.Fprintln(w)
}

// progressLine shows progress: on a terminal one line rewritten in place, otherwise a
// log line every ten seconds. Log lines pass through it so they do not mix with the
// progress line.
type progressLine struct {
	mu    sync.Mutex
	w     io.Writer
	tty   bool
	start time.Time
	last  time.Time
	shown bool
	p     migrate.Progress
	now   func() time.Time
}

func newProgressLine(w io.Writer) *progressLine {
	tty := false
	if f, ok := w.(*os.File); ok {
		if fi, err := f.Stat(); err == nil && fi.Mode()&os.ModeCharDevice != 0 {
			tty = true
		}
	}
	return &progressLine{w: w, tty: tty, start: time.Now(), now: time.Now}
}

func (p *progressLine) Write(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.clear()
	return p.w.Write(b)
}

func (p *progressLine) clear() {
	if p.tty && p.shown {
		fmt.Fprint(p.w, "\r\033[K")
		p.shown = false
	}
}

func (p *progressLine) update(pr migrate.Progress) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.p = pr
	now := p.now()
	every := 10 * time.Second
	if p.tty {
		every = 200 * time.Millisecond
	}
	if now.Sub(p.last) < every && pr.QueuesDone < pr.Queues {
		return
	}
	p.last = now
	line := p.line(now)
	if p.tty {
		fmt.Fprint(p.w, "\r\033[K"+line)
		p.shown = true
	} else {
		fmt.Fprintln(p.w, "progress: "+line)
	}
}

func (p *progressLine) line(now time.Time) string {
	el := now.Sub(p.start).Seconds()
	rate := 0.0
	if el > 0 {
		rate = float64(p.p.Messages) / el
	}
	eta := "?"
	if left := p.p.Total - p.p.Messages; rate > 0 && left > 0 {
		eta = time.Duration(float64(left) / rate * float64(time.Second)).Round(time.Second).String()
	} else if left <= 0 {
		eta = "0s"
	}
	return fmt.Sprintf("%d/%d messages, %.0f/s, queues %d/%d, ETA %s", p.p.Messages, p.p.Total, rate, p.p.QueuesDone, p.p.Queues, eta)
}

func (p *progressLine) finish() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.tty && p.shown {
		fmt.Fprintln(p.w)
		p.shown = false
	}
}

// killHook returns, for ANYSQS_MIGRATE_KILL_AT=POINT:N, a hook that kills this process
// with SIGKILL the Nth time a send reaches POINT (see migrate.Options.Hook): the crash
// tests' way to stop a run at an exact step. Nil when unset.
func killHook(spec string) func(string) {
	point, n, ok := strings.Cut(spec, ":")
	count, err := strconv.Atoi(n)
	if !ok || err != nil || count < 1 {
		return nil
	}
	var mu sync.Mutex
	return func(p string) {
		if p != point {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		if count--; count == 0 {
			_ = syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way; go no further
		}
	}
}
