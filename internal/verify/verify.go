// Package verify is `anysqs verify`: the conformance suite, linked into the binary, run
// against the backend a configuration file names or against any SQS endpoint, and the
// compatibility report of what it found.
//
// With --config, the configured backend is opened in this process and served on
// loopback through one gateway on the real clock, which the cases share; the few cases
// that restart the gateway or set its in-flight limit run afterwards, one at a time,
// each with a gateway of its own over the same storage. Expectations follow the levels
// the driver declares. The verdicts are those of the project's served rows
// (docs/compat/<backend>-served.md): the real clock is what a shared storage allows,
// since a gateway on a fake clock would expire every other queue's messages.
//
// With --endpoint (a URL, or aws for AWS SQS itself), the cases are judged against
// SQS's documented behaviour, with no declarations; restart cases and cases that set
// the gateway's limits do not run there.
//
// Safety: every queue a run creates is named <prefix>c<8 hex>-..., the prefix random
// unless --prefix gives it; a case deletes its queues when it ends, and the run deletes
// whatever is left under the prefix before it exits, also on SIGINT. Nothing else is
// read, changed or deleted. --cleanup --prefix P deletes what a killed run left.
// --dry-run rehearses the selected cases on the embedded backend in a temporary
// directory and prints the queues and requests each would make, touching nothing else.
//
// Queue time: a case may wait up to 45 s of real time (--long: 16 min, enough for
// SQS's 15-minute delays and the one-minute minimum retention); cases needing more
// (12 h of visibility, days of retention) report "needs a gateway clock".
package verify

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/capabilities/report"
	"github.com/anysqs/anysqs/conformance"
	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/internal/cli"
	"github.com/anysqs/anysqs/internal/config"
	"github.com/anysqs/anysqs/internal/mq"
)

// longBudget is the real time a case may wait with --long.
const longBudget = 16 * time.Minute

// Build says which anysqs ran: its version and commit, for the report.
type Build struct{ Version, Commit string }

const about = `Run the conformance suite against the backend a configuration file names (--config),
or against an SQS endpoint (--endpoint URL, or aws for AWS SQS with your credentials),
and print where it differs from what the backend declares (or from SQS).

Every queue it creates starts with --prefix (random by default); it deletes them when
it ends, also on Ctrl-C, and touches no other queue. --cleanup --prefix P deletes what
a killed run left. --dry-run rehearses the run on a throwaway embedded backend and
prints the queues and requests it would make. Exit status 0: no case contradicted a
declaration (--endpoint: no case differed from SQS); 1: some did.`

// Run runs `anysqs verify` with args (after "verify").
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, build Build) error {
	fs := cli.NewFlags("verify", "--config FILE | --endpoint URL|aws [flags]", about)
	cfgPath := fs.String("config", "", "configuration `FILE` whose backend to verify")
	var conn mq.Conn
	conn.Flags(fs)
	name := fs.String("name", "", "with --endpoint: the run's name in its report (default: endpoint, or aws-sqs for AWS SQS)")
	account := fs.String("account", "", "with --endpoint: the account `ID` in its queue URLs (default: read from a queue the run creates)")
	prefix := fs.String("prefix", "", "queue name `PREFIX` of the run (default: anysqs-verify-<random>-)")
	casesPat := fs.String("cases", "", "run only the cases whose <capability>/<case> path matches this `REGEXP`")
	reportDir := fs.String("report", "", "write the report (<backend>.md, .json, README.md, index.html) into `DIR`")
	dryRun := fs.Bool("dry-run", false, "rehearse on a throwaway embedded backend: print the queues and requests, change nothing")
	cleanup := fs.Bool("cleanup", false, "delete the queues under --prefix that a killed run left, then stop")
	long := fs.Bool("long", false, "let cases wait up to 16 min of real time for queue time (retention, long delays)")
	parallel := fs.Int("parallel", 32, "cases run at once")
	list := fs.Bool("list", false, "list the cases and stop")
	if err := fs.ParseArgs(args, stdout); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	var match *regexp.Regexp
	if *casesPat != "" {
		re, err := regexp.Compile(*casesPat)
		if err != nil {
			return cli.Usagef("verify: --cases: %v", err)
		}
		match = re
	}
	if *list {
		for _, p := range conformance.CasePaths() {
			if match == nil || match.MatchString(p) {
				fmt.Fprintln(stdout, p)
			}
		}
		return nil
	}
	if (*cfgPath == "") == (conn.Endpoint == "") {
		return cli.Usagef("verify: give one of --config FILE and --endpoint URL|aws")
	}
	if *cleanup && *prefix == "" {
		return cli.Usagef("verify: --cleanup needs the --prefix of the run to clean up")
	}
	if *prefix == "" {
		*prefix = "anysqs-verify-" + randomHex(3) + "-"
	}
	if !validPrefix.MatchString(*prefix) {
		return cli.Usagef("verify: --prefix %q: want 1 to 40 of a-z, A-Z, 0-9, - and _", *prefix)
	}

	ctx, stop := signal.NotifyContext(ctx, os.Interrupt, syscall.SIGTERM)
	defer stop()

	// Only a real run reads the endpoint's account: it creates a queue to do so.
	target, where, err := resolveTarget(ctx, *cfgPath, conn, *account, *prefix, !*cleanup && !*dryRun)
	if err != nil {
		return err
	}
	if *name != "" {
		if *cfgPath != "" || !validPrefix.MatchString(*name) {
			return cli.Usagef("verify: --name %q: an --endpoint run's name, of a-z, A-Z, 0-9, - and _", *name)
		}
		target.Backend = *name
	}
	if *cleanup {
		left, err := conformance.Cleanup(context.WithoutCancel(ctx), target, *prefix)
		for _, l := range left {
			fmt.Fprintln(stderr, "left:", l)
		}
		if err != nil {
			return err
		}
		if len(left) > 0 {
			return fmt.Errorf("verify: %d queues under %s could not be deleted", len(left), *prefix)
		}
		fmt.Fprintf(stdout, "no queue under %s is left\n", *prefix)
		return nil
	}
	budget := time.Duration(0)
	if *long {
		budget = longBudget
	}
	if *dryRun {
		return rehearse(ctx, stdout, target, *prefix, match, *parallel, budget)
	}

	fmt.Fprintf(stderr, "verifying %s (%s), queues under %s\n", target.Backend, where, *prefix)
	events, err := os.CreateTemp("", "anysqs-verify-*.json")
	if err != nil {
		return err
	}
	defer os.Remove(events.Name())
	defer events.Close()
	total := 0
	for _, p := range conformance.CasePaths() {
		if match == nil || match.MatchString(p) {
			total++
		}
	}
	prog := newProgress(stderr, total)
	res, runErr := conformance.Run(ctx, conformance.RunOptions{
		Target: target, Prefix: *prefix, Match: match, Budget: budget, Parallel: *parallel,
		Events: events, Progress: prog.add,
	})
	prog.done()
	if res == nil {
		return runErr
	}
	for _, l := range res.Left {
		fmt.Fprintln(stderr, "left behind:", l)
	}
	printSummary(stdout, res, *long)
	if *reportDir != "" {
		if err := writeReport(res, events.Name(), *reportDir, describeTarget(res, where, build, *cfgPath != ""), build.Commit, budget); err != nil {
			return err
		}
		fmt.Fprintf(stdout, "report written to %s\n", filepath.Join(*reportDir, target.Backend+".md"))
	}
	if runErr != nil {
		return fmt.Errorf("verify interrupted: %w", runErr)
	}
	if n := countStatus(res, report.Fail); n > 0 {
		what := "contradicted what the backend declares"
		if *cfgPath == "" {
			what = "differed from SQS's documented behaviour"
		}
		return &exitError{fmt.Sprintf("%d of %d cases %s", n, len(res.Outcomes), what)}
	}
	return nil
}

// exitError is a finished run whose cases failed: exit status 1, no usage hint.
type exitError struct{ msg string }

func (e *exitError) Error() string { return e.msg }

var validPrefix = regexp.MustCompile(`^[A-Za-z0-9_-]{1,40}$`)

// resolveTarget turns the flags into what the run judges, and a description of where
// that is, with no secret in it.
func resolveTarget(ctx context.Context, cfgPath string, conn mq.Conn, account, prefix string, probe bool) (conformance.Target, string, error) {
	if cfgPath != "" {
		cfg, err := config.Load(cfgPath, os.Getenv)
		if err != nil {
			return conformance.Target{}, "", err
		}
		if cfg.Routed() {
			return conformance.Target{}, "", fmt.Errorf("%s routes queues to several backends (backends:): verify one backend at a time, with a configuration of its own, or serve it and verify --endpoint", cfgPath)
		}
		name, opts := cfg.Backend.Name, cfg.Backend.Options
		t := conformance.Target{Backend: name, Account: cfg.AccountID, Region: cfg.Region,
			Policy: capabilities.Config{Mode: cfg.Policy.Mode, Overrides: cfg.Policy.Overrides, Require: cfg.Policy.Require},
			Open: func(ctx context.Context) (drivers.Driver, error) {
				d, err := drivers.Open(ctx, name, opts)
				var oe *drivers.OptionError
				if errors.As(err, &oe) {
					return nil, fmt.Errorf("%w (backend %s)", cfg.Locate("backend.options."+oe.Key, oe.Msg), name)
				}
				return d, err
			}}
		return t, Location(opts), nil
	}
	cfg, endpoint, err := conn.Config(ctx)
	if err != nil {
		return conformance.Target{}, "", err
	}
	t := conformance.Target{Backend: "endpoint", Endpoint: endpoint, Account: account, Region: cfg.Region,
		Client: func(o *sqs.Options) { o.Region, o.Credentials = cfg.Region, cfg.Credentials }}
	where := endpoint
	if endpoint == "" {
		t.Backend, t.Endpoint = report.ReferenceBackend, "https://sqs."+cfg.Region+".amazonaws.com"
		where = "AWS SQS " + cfg.Region
	}
	if t.Account == "" && probe {
		if t.Account, err = probeAccount(ctx, t, prefix); err != nil {
			return t, where, err
		}
	}
	if t.Account != "" {
		where += ", account " + t.Account
	}
	return t, where, nil
}

// probeAccount reads the account from the URL of a queue it creates under prefix, and
// deletes the queue.
func probeAccount(ctx context.Context, t conformance.Target, prefix string) (string, error) {
	client := sqs.New(sqs.Options{BaseEndpoint: aws.String(t.Endpoint), Retryer: aws.NopRetryer{}}, t.Client)
	out, err := client.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String(prefix + "account")})
	if err != nil {
		return "", fmt.Errorf("verify: create a queue to read the account from: %w", err)
	}
	defer client.DeleteQueue(context.WithoutCancel(ctx), &sqs.DeleteQueueInput{QueueUrl: out.QueueUrl}) //nolint:errcheck // the run's sweep retries
	u, err := url.Parse(aws.ToString(out.QueueUrl))
	if err != nil {
		return "", err
	}
	parts := strings.Split(strings.Trim(u.Path, "/"), "/")
	if len(parts) != 2 {
		return "", fmt.Errorf("verify: queue URL %s has no account; give --account", aws.ToString(out.QueueUrl))
	}
	return parts[0], nil
}

// describeTarget is the report's "run against" line.
func describeTarget(res *conformance.Result, where string, b Build, config bool) string {
	s := where
	if v := res.Desc.ServiceVersion; config && v != "" {
		if v[0] >= '0' && v[0] <= '9' {
			v = res.Backend + " " + v
		}
		s = v + " at " + where
	}
	return fmt.Sprintf("%s, by anysqs verify (anysqs %s, commit %s) on %s", s, b.Version, b.Commit, res.Started.Format("2006-01-02"))
}

// writeReport writes the run's compatibility report into dir.
func writeReport(res *conformance.Result, eventsPath, dir, target, commit string, budget time.Duration) error {
	decls, err := os.MkdirTemp("", "anysqs-verify-decl-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(decls)
	d := res.Declarations(target, commit, budget)
	d.Reference = res.Backend == report.ReferenceBackend
	if err := report.WriteDeclarations(decls, d); err != nil {
		return err
	}
	f, err := os.Open(eventsPath)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = report.Generate(report.Options{TestJSON: f, DeclarationsDir: decls, OutDir: dir})
	if err != nil && !errors.Is(err, report.ErrFailed) {
		return err
	}
	return nil
}

// embedded is the default backend, which a rehearsal runs on.
var embedded = config.Default().Backend.Name

// rehearse runs the selected cases on throwaway embedded storage and prints what each
// would create and call.
func rehearse(ctx context.Context, w io.Writer, target conformance.Target, prefix string, match *regexp.Regexp, parallel int, budget time.Duration) error {
	var mu sync.Mutex
	var dirs []string
	fresh := func() (func(context.Context) (drivers.Driver, error), func(), error) {
		dir, err := os.MkdirTemp("", "anysqs-verify-dry-")
		if err != nil {
			return nil, nil, err
		}
		mu.Lock()
		dirs = append(dirs, dir)
		mu.Unlock()
		return func(ctx context.Context) (drivers.Driver, error) {
			return drivers.Open(ctx, embedded, map[string]any{"data_dir": dir})
		}, func() { os.RemoveAll(dir) }, nil
	}
	res, err := conformance.Run(ctx, conformance.RunOptions{
		Target: conformance.Target{Backend: "rehearsal", Fresh: fresh}, Prefix: prefix, Match: match,
		Parallel: parallel, Count: true, Budget: budget,
	})
	if res == nil {
		return err
	}
	queues, requests := 0, 0
	fmt.Fprintf(w, "a run against %s would create these queues (names start %sc<8 hex>-) and make about these requests:\n", target.Backend, prefix)
	for _, o := range res.Outcomes {
		fmt.Fprintf(w, "  %-75s %3d queues %5d requests\n", o.Path, o.Queues, o.Requests)
		queues += o.Queues
		requests += o.Requests
	}
	fmt.Fprintf(w, "total: %d cases, %d queues, about %d requests (rehearsed on an embedded backend; a backend that declares less runs fewer)\n",
		len(res.Outcomes), queues, requests)
	return err
}

// printSummary prints the counts, then each case that did not pass.
func printSummary(w io.Writer, res *conformance.Result, long bool) {
	fmt.Fprintf(w, "\n%-22s %d\n", "cases", len(res.Outcomes))
	for _, s := range []report.Status{report.Pass, report.Fail, report.NeedsGatewayClock, report.NotRun} {
		if n := countStatus(res, s); n > 0 || s == report.Fail {
			fmt.Fprintf(w, "%-22s %d\n", s, n)
		}
	}
	if n := countStatus(res, report.NeedsGatewayClock); n > 0 && !long {
		fmt.Fprintln(w, "(needs-gateway-clock: more queue time than a run waits for; --long waits up to 16 min a case)")
	}
	var bad []conformance.Outcome
	for _, o := range res.Outcomes {
		if o.Status == report.Fail {
			bad = append(bad, o)
		}
	}
	sort.Slice(bad, func(i, j int) bool { return bad[i].Path < bad[j].Path })
	for _, o := range bad {
		fmt.Fprintf(w, "\nFAIL %s\n", o.Path)
		for _, l := range tail(o.Output, 6) {
			fmt.Fprintln(w, "    "+l)
		}
	}
}

func countStatus(res *conformance.Result, s report.Status) int {
	n := 0
	for _, o := range res.Outcomes {
		if o.Status == s {
			n++
		}
	}
	return n
}

func tail(lines []string, n int) []string {
	if len(lines) > n {
		return lines[len(lines)-n:]
	}
	return lines
}
