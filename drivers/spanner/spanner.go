package spanner

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"cloud.google.com/go/spanner"
	"google.golang.org/api/option"
	"google.golang.org/grpc/codes"

	"github.com/anysqs/anysqs/drivers"
)

// Version is the driver's version, reported by Describe.
const Version = "0.1.0"

func init() {
	drivers.Register("spanner", func(ctx context.Context, raw map[string]any) (drivers.Driver, error) {
		var o Options
		if err := drivers.DecodeOptions(raw, &o); err != nil {
			return nil, err
		}
		return Open(ctx, o)
	})
}

// Options configure the driver; see the package doc, "Configuration".
type Options struct {
	Project  string `json:"project"`
	Instance string `json:"instance"`
	Database string `json:"database"`
	// CredentialsFile is a service account key file; empty: Application Default Credentials.
	CredentialsFile string `json:"credentials_file"`
	// PollInterval is the longest a waiting receive goes between re-checks (Go duration).
	PollInterval string `json:"poll_interval"`
	// SerializeReadWrite: "auto" (only against an emulator), "always" or "never".
	SerializeReadWrite string `json:"serialize_read_write"`
}

// Driver is the Cloud Spanner driver.
type Driver struct {
	// The driver declares drivers.ActivityPoll: Spanner has no cheap cross-client
	// notification (change streams cost a partitioned stream read per gateway and have
	// seconds of latency), so waiting receives re-check at most PollInterval apart.
	drivers.NoActivity

	client   *spanner.Client
	db       string
	emulator string // SPANNER_EMULATOR_HOST, empty against Cloud Spanner
	poll     time.Duration
	// serial, when set, lets one read-write transaction of this client run at a time (see
	// rw).
	serial chan struct{}
	// receiptKey seals receipt handles; every gateway on the database reads the same one.
	receiptKey []byte

	transactions atomic.Int64
	aborts       atomic.Int64
	unknown      atomic.Int64 // commits with an unknown outcome resolved by reading
	purgeLeft    atomic.Int64 // purges whose partitioned delete failed (rows stay, never returned)

	// groupCursor is where each FIFO queue's sweep of idle group rows resumes.
	groupMu     sync.Mutex
	groupCursor map[string]string
}

// Open connects to the database, creating the instance and database on an emulator when
// missing, and the schema everywhere.
func Open(ctx context.Context, o Options) (*Driver, error) {
	if o.Project == "" || o.Instance == "" || o.Database == "" {
		return nil, fmt.Errorf("spanner: project, instance and database are required")
	}
	d := &Driver{NoActivity: drivers.NoActivity{Name: "spanner", Why: "waiting receives poll; there is no activity notification"},
		db:       "projects/" + o.Project + "/instances/" + o.Instance + "/databases/" + o.Database,
		emulator: os.Getenv("SPANNER_EMULATOR_HOST"), poll: time.Second}
	if o.PollInterval != "" {
		p, err := time.ParseDuration(o.PollInterval)
		if err != nil || p <= 0 {
			return nil, fmt.Errorf("spanner: poll_interval %q is not a positive duration", o.PollInterval)
		}
		d.poll = p
	}
	switch o.SerializeReadWrite {
	case "", "auto":
		if d.emulator != "" {
			d.serial = make(chan struct{}, 1)
		}
	case "always":
		d.serial = make(chan struct{}, 1)
	case "never":
	default:
		return nil, fmt.Errorf("spanner: serialize_read_write %q is not auto, always or never", o.SerializeReadWrite)
	}
	var opts []option.ClientOption
	if o.CredentialsFile != "" {
		opts = append(opts, option.WithAuthCredentialsFile(option.ServiceAccount, o.CredentialsFile))
	}
	if err := d.ensureDatabase(ctx, o, opts); err != nil {
		return nil, err
	}
	c, err := spanner.NewClientWithConfig(ctx, d.db, spanner.ClientConfig{DisableNativeMetrics: true}, opts...)
	if err != nil {
		return nil, mapErr(ctx, err, "connect to "+d.db)
	}
	d.client = c
	if err := d.loadReceiptKey(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return d, nil
}

// Close releases the client.
func (d *Driver) Close() error {
	d.client.Close()
	return nil
}

// Ping reads one row of nothing on a strong single-use transaction.
func (d *Driver) Ping(ctx context.Context) error {
	err := d.ro(ctx, func(tx *spanner.ReadOnlyTransaction) error {
		it := tx.Query(ctx, spanner.Statement{SQL: "SELECT 1"})
		defer it.Stop()
		_, err := it.Next()
		return err
	})
	return mapErr(ctx, err, "ping")
}

// rw runs f in a read-write transaction. The client retries f when Spanner aborts the
// transaction (another transaction won a lock), so f must rebuild its results from
// scratch each time; every retry is counted as an abort.
//
// Against the emulator one client's read-write transactions run one at a time: the
// client (since v1.85, with multiplexed sessions only) runs every transaction on one
// session, and the emulator allows one transaction per session, so a second begun while
// the first is open invalidates the first ("Invalid transaction ID", FailedPrecondition,
// which the client does not retry). Transactions of different clients are on different
// sessions and the emulator aborts all but one of them, which the client retries.
func (d *Driver) rw(ctx context.Context, what string, f func(ctx context.Context, tx *spanner.ReadWriteTransaction) error) error {
	_, err := d.rwAt(ctx, what, f)
	return err
}

// rwAt is rw that also returns the commit timestamp.
func (d *Driver) rwAt(ctx context.Context, what string, f func(ctx context.Context, tx *spanner.ReadWriteTransaction) error) (time.Time, error) {
	release, err := d.take(ctx)
	if err != nil {
		return time.Time{}, err
	}
	defer release()
	d.transactions.Add(1)
	attempts := 0
	ts, err := d.client.ReadWriteTransaction(ctx, func(ctx context.Context, tx *spanner.ReadWriteTransaction) error {
		attempts++
		if attempts > 1 {
			d.aborts.Add(1)
		}
		return f(ctx, tx)
	})
	return ts, mapErr(ctx, err, what)
}

// ro runs f in a strong read-only transaction, which takes no locks. Against the
// emulator it, too, waits its turn: a read-only transaction begun on the session also
// invalidates an open read-write one there.
func (d *Driver) ro(ctx context.Context, f func(tx *spanner.ReadOnlyTransaction) error) error {
	release, err := d.take(ctx)
	if err != nil {
		return err
	}
	defer release()
	tx := d.client.ReadOnlyTransaction()
	defer tx.Close()
	return f(tx)
}

// snapshot is ro for a function's own body: the caller defers done, which may be called
// more than once. When ctx is done
// it does not wait, and the transaction's reads fail with ctx's error.
func (d *Driver) snapshot(ctx context.Context) (tx *spanner.ReadOnlyTransaction, done func()) {
	release, err := d.take(ctx)
	tx = d.client.ReadOnlyTransaction()
	if err != nil {
		return tx, tx.Close
	}
	return tx, sync.OnceFunc(func() { tx.Close(); release() })
}

// take waits for this client's turn to run a transaction, when transactions are
// serialized (see rw).
func (d *Driver) take(ctx context.Context) (release func(), err error) {
	if d.serial == nil {
		return func() {}, nil
	}
	select {
	case d.serial <- struct{}{}:
		return func() { <-d.serial }, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// outcomeUnknown says whether err leaves a commit's outcome unknown: the request may
// have been applied before the connection or the deadline gave out.
func outcomeUnknown(ctx context.Context, err error) bool {
	if err == nil || ctx.Err() != nil {
		return false
	}
	var de *drivers.Error
	if errors.As(err, &de) && de.Kind != drivers.KindUnavailable {
		return false
	}
	switch spanner.ErrCode(err) {
	case codes.Unavailable, codes.DeadlineExceeded, codes.Unknown, codes.Internal:
		return true
	}
	return false
}

// mapErr classifies err; driver errors and context errors pass through.
func mapErr(ctx context.Context, err error, what string) error {
	if err == nil {
		return nil
	}
	var de *drivers.Error
	if errors.As(err, &de) {
		return de
	}
	if ctxErr := ctx.Err(); ctxErr != nil {
		return ctxErr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	switch spanner.ErrCode(err) {
	case codes.Aborted:
		return drivers.Wrap(drivers.KindAborted, err, what)
	case codes.FailedPrecondition:
		if strings.Contains(err.Error(), "Invalid transaction ID") {
			// The emulator dropped the transaction before it committed (see rw).
			return drivers.Wrap(drivers.KindAborted, err, what)
		}
		return drivers.Wrap(drivers.KindInternal, err, what)
	case codes.ResourceExhausted:
		return drivers.Wrap(drivers.KindThrottled, err, what)
	case codes.InvalidArgument, codes.OutOfRange:
		return drivers.Wrap(drivers.KindInvalidArgument, err, what)
	case codes.PermissionDenied, codes.Unauthenticated:
		return drivers.Wrap(drivers.KindUnavailable, err, what+" (credentials)")
	}
	return drivers.Wrap(drivers.KindUnavailable, err, what)
}

func notFound(name string) error {
	return drivers.Errorf(drivers.KindNotFound, "queue %s does not exist", name)
}

// isFIFO tells the queue kind from its name, which the gateway checks against the
// FifoQueue attribute.
func isFIFO(name string) bool { return strings.HasSuffix(name, ".fifo") }
