package firestore

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"math/big"
	"os"
	"regexp"
	"sync/atomic"
	"time"

	fs "cloud.google.com/go/firestore"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/anysqs/anysqs/drivers"
)

// Version is this driver's version, reported by Describe.
const Version = "0.1.0"

// Defaults of Options.
const (
	DefaultPrefix        = "anysqs"
	DefaultShards        = 4
	DefaultPollInterval  = time.Second
	DefaultContentionMax = 10 * time.Second
	maxShards            = 30 // queries name every shard in one "in" filter, which takes at most 30 values
)

// Options configure the driver. They are decoded from the backend section of the
// gateway's configuration.
type Options struct {
	// Project is the Google Cloud project; empty takes it from the environment
	// (GOOGLE_CLOUD_PROJECT, the credentials, or the metadata server).
	Project string `json:"project"`
	// Database is the Firestore database id; empty means "(default)".
	Database string `json:"database"`
	// Prefix starts the name of every root collection the driver uses, so several
	// installations (or test cases) share one database without seeing each other.
	Prefix string `json:"collection_prefix"`
	// Shards is how many index shards new queues spread their messages over (1-30); see
	// the package doc. A queue keeps the count it was created with.
	Shards int `json:"shards"`
	// PollIntervalMS is the longest a waiting receive goes without re-checking the queue,
	// so the worst-case delay before a message sent through another gateway is picked up.
	PollIntervalMS int `json:"poll_interval_ms"`
	// ContentionRetryMS bounds how long a call retries transactions that Firestore aborted
	// for contention when its context has no earlier deadline.
	ContentionRetryMS int `json:"contention_retry_ms"`
	// CheckIndexes runs each indexed query once at Open, so a missing composite index
	// fails the start with its definition rather than the first receive (default true).
	CheckIndexes *bool `json:"check_indexes"`
	// CredentialsFile is a service account key file (that type only); empty uses Application Default
	// Credentials. Ignored when FIRESTORE_EMULATOR_HOST is set.
	CredentialsFile string `json:"credentials_file"`
	// EmulatorHost, if set, is used as FIRESTORE_EMULATOR_HOST (host:port).
	EmulatorHost string `json:"emulator_host"`
}

// Driver is the Firestore backend. It is safe for concurrent use.
type Driver struct {
	// The driver declares drivers.ActivityPoll: the gateway re-checks waiting receives at
	// most the poll interval apart instead.
	drivers.NoActivity

	client     *fs.Client
	prefix     string
	shards     int
	poll       time.Duration
	contention time.Duration
	emulator   string
	unchecked  bool // check_indexes was off
	secret     []byte
	reserved   reservations

	aborts    atomic.Int64 // transaction attempts Firestore aborted
	retries   atomic.Int64 // of those, retried within the request's deadline
	exhausted atomic.Int64 // calls that ran out of retries and answered KindAborted
	txs       atomic.Int64 // transactions committed
}

func init() {
	drivers.Register("firestore", func(ctx context.Context, raw map[string]any) (drivers.Driver, error) {
		var o Options
		if err := drivers.DecodeOptions(raw, &o); err != nil {
			return nil, err
		}
		return Open(ctx, o)
	})
}

var prefixPattern = regexp.MustCompile(`^[A-Za-z0-9_-]{1,100}$`)

// Open connects to Firestore, loads (or creates) the receipt key and checks indexes.
func Open(ctx context.Context, o Options) (*Driver, error) {
	if o.Prefix == "" {
		o.Prefix = DefaultPrefix
	}
	if !prefixPattern.MatchString(o.Prefix) {
		return nil, fmt.Errorf("firestore: collection_prefix %q: use 1-100 letters, digits, _ or -", o.Prefix)
	}
	if o.Shards == 0 {
		o.Shards = DefaultShards
	}
	if o.Shards < 1 || o.Shards > maxShards {
		return nil, fmt.Errorf("firestore: shards %d: must be 1-%d", o.Shards, maxShards)
	}
	if o.PollIntervalMS < 0 || o.ContentionRetryMS < 0 {
		return nil, errors.New("firestore: poll_interval_ms and contention_retry_ms must not be negative")
	}
	if o.EmulatorHost != "" {
		// The client library reads the emulator address from the environment only.
		if err := os.Setenv("FIRESTORE_EMULATOR_HOST", o.EmulatorHost); err != nil {
			return nil, err
		}
	}
	emulator := os.Getenv("FIRESTORE_EMULATOR_HOST")
	project := o.Project
	if project == "" {
		project = fs.DetectProjectID
		if emulator != "" {
			if project = os.Getenv("GOOGLE_CLOUD_PROJECT"); project == "" {
				return nil, errors.New("firestore: project is required with the emulator (option project or GOOGLE_CLOUD_PROJECT)")
			}
		}
	}
	var opts []option.ClientOption
	if o.CredentialsFile != "" && emulator == "" {
		opts = append(opts, option.WithAuthCredentialsFile(option.ServiceAccount, o.CredentialsFile))
	}
	database := o.Database
	if database == "" {
		database = fs.DefaultDatabaseID
	}
	client, err := fs.NewClientWithDatabase(ctx, project, database, opts...)
	if err != nil {
		return nil, fmt.Errorf("firestore: connect to project %q database %q: %w", project, database, err)
	}
	d := &Driver{client: client, prefix: o.Prefix, shards: o.Shards, emulator: emulator,
		poll: time.Duration(o.PollIntervalMS) * time.Millisecond, contention: time.Duration(o.ContentionRetryMS) * time.Millisecond}
	if d.poll == 0 {
		d.poll = DefaultPollInterval
	}
	d.NoActivity = drivers.NoActivity{Name: "firestore",
		Why: fmt.Sprintf("long polls re-check the queue every %v; there is no notification", d.poll)}
	if d.contention == 0 {
		d.contention = DefaultContentionMax
	}
	if err := d.loadSecret(ctx); err != nil {
		client.Close()
		return nil, err
	}
	d.unchecked = o.CheckIndexes != nil && !*o.CheckIndexes
	if !d.unchecked {
		if err := d.checkIndexes(ctx); err != nil {
			client.Close()
			return nil, err
		}
	}
	return d, nil
}

// Close closes the client.
func (d *Driver) Close() error { return d.client.Close() }

// errRetryTx, returned by a transaction body, makes runTx run it again: the body found
// that a document it had chosen outside the transaction changed meanwhile.
var errRetryTx = errors.New("firestore: state changed under the transaction; run it again")

// runTx runs f in a read-write transaction. Attempts that Firestore aborts for contention
// (or that f asks to repeat) run again after a short jittered pause, until the context's
// deadline or the driver's contention budget; then the call fails with KindAborted, which
// clients retry. f must do all its reads before its first write.
func (d *Driver) runTx(ctx context.Context, what string, f func(ctx context.Context, tx *fs.Transaction) error) error {
	end := time.Now().Add(d.contention)
	if dl, ok := ctx.Deadline(); ok && dl.Before(end) {
		end = dl
	}
	pause := 5 * time.Millisecond
	for attempt := 0; ; attempt++ {
		err := d.client.RunTransaction(ctx, f, fs.MaxAttempts(1))
		if err == nil {
			d.txs.Add(1)
			return nil
		}
		aborted := status.Code(err) == codes.Aborted
		if !aborted && !errors.Is(err, errRetryTx) {
			return classify(ctx, err, what)
		}
		if aborted {
			d.aborts.Add(1)
		}
		wait := jitter(pause)
		if time.Now().Add(wait).After(end) || ctx.Err() != nil {
			d.exhausted.Add(1)
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return drivers.Wrap(drivers.KindAborted, err, "firestore: "+what+": contention outlasted the retries")
		}
		d.retries.Add(1)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(wait):
		}
		pause = min(pause*2, 250*time.Millisecond)
	}
}

func jitter(d time.Duration) time.Duration {
	n, err := rand.Int(rand.Reader, big.NewInt(int64(d)))
	if err != nil {
		return d
	}
	return d/2 + time.Duration(n.Int64())/2
}

// runClaimTx runs a claim's transaction once. A claim's candidates were chosen before
// it, so rather than run the same claim again after an abort, the receive chooses
// candidates anew (contended reports it); the round limit of the receive bounds that.
func (d *Driver) runClaimTx(ctx context.Context, what string, f func(ctx context.Context, tx *fs.Transaction) error) (contended bool, err error) {
	err = d.client.RunTransaction(ctx, f, fs.MaxAttempts(1))
	switch {
	case err == nil:
		d.txs.Add(1)
		return false, nil
	case status.Code(err) == codes.Aborted:
		d.aborts.Add(1)
		return true, nil
	case errors.Is(err, errRetryTx):
		return true, nil
	}
	return false, classify(ctx, err, what)
}

// randInt returns a uniform int in [0, n).
func randInt(n int) int {
	if n <= 1 {
		return 0
	}
	v, err := rand.Int(rand.Reader, big.NewInt(int64(n)))
	if err != nil {
		return 0
	}
	return int(v.Int64())
}

// classify wraps a native error once with a kind; driver and context errors pass.
func classify(ctx context.Context, err error, what string) error {
	var de *drivers.Error
	if err == nil || errors.As(err, &de) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	msg := "firestore: " + what
	switch status.Code(err) {
	case codes.Aborted:
		return drivers.Wrap(drivers.KindAborted, err, msg)
	case codes.ResourceExhausted:
		return &drivers.Error{Kind: drivers.KindThrottled, Message: msg, Err: err, RetryAfter: time.Second}
	case codes.Unavailable, codes.DeadlineExceeded, codes.Canceled, codes.Internal, codes.Unknown:
		return drivers.Wrap(drivers.KindUnavailable, err, msg)
	case codes.FailedPrecondition:
		return drivers.Wrap(drivers.KindInternal, err, msg+" (a missing index? see docs/backends/firestore.md)")
	case codes.PermissionDenied, codes.Unauthenticated:
		return drivers.Wrap(drivers.KindUnavailable, err, msg+": Firestore refused the credentials")
	}
	return drivers.Wrap(drivers.KindInternal, err, msg)
}

func notFound(name string) error {
	return drivers.Errorf(drivers.KindNotFound, "queue %q does not exist", name)
}

var _ drivers.Driver = (*Driver)(nil)
