package servicebus

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// Version is the driver's version, reported by Describe.
const Version = "0.1.0"

// ConnectionStringEnv is read when neither Options.ConnectionString nor
// Options.Namespace nor Options.Model is set.
const ConnectionStringEnv = "AZURE_SERVICEBUS_CONNECTION_STRING"

// Defaults of the options.
const (
	DefaultLockDurationSeconds  = 60
	DefaultMaxVisibilitySeconds = sqsrule.MaxVisibilityTimeout
	DefaultMaxMessageBytes      = 253952 // 248 KiB: Standard's 256 KiB less room for the driver's properties
)

// Options configure the driver: the `backend.options` section of the gateway's
// configuration file. Exactly one of ConnectionString, Namespace and Model names the
// namespace (none: $AZURE_SERVICEBUS_CONNECTION_STRING).
type Options struct {
	// ConnectionString is a namespace connection string with Manage rights.
	ConnectionString string `json:"connection_string"`
	// Namespace is the fully qualified namespace (name.servicebus.windows.net) reached
	// with an Entra ID credential (azidentity's DefaultAzureCredential: environment,
	// workload identity, managed identity, Azure CLI, in that order).
	Namespace string `json:"namespace"`
	// ManagedIdentityClientID selects a user-assigned managed identity for Namespace.
	ManagedIdentityClientID string `json:"managed_identity_client_id"`
	// Model names an in-memory model namespace of this process instead of a real one:
	// FOR TESTS AND DEMONSTRATIONS ONLY. Nothing survives the process, and the model's
	// behaviour is the driver authors' reading of Service Bus's documentation.
	Model string `json:"model"`
	// EntityPrefix is put before every queue name to form its entity name, so anysqs
	// queues can share a namespace with other entities. Default none.
	EntityPrefix string `json:"entity_prefix"`
	// LockDurationSeconds is the lock duration of the entities the driver creates (5 to
	// 300). Default 60. Visibility timeouts longer than it are held by renewing the lock.
	LockDurationSeconds int `json:"lock_duration_seconds"`
	// MaxVisibilitySeconds is the longest visibility timeout the driver holds (up to
	// 43200, SQS's own bound); longer ones are rejected. Default 43200.
	MaxVisibilitySeconds int `json:"max_visibility_seconds"`
	// MaxMessageBytes is the largest SQS message (body and attributes) accepted.
	// Default 253952 for the Standard tier's 256 KiB; Premium namespaces may raise it to
	// 1048576 once the entity's maximum message size allows it.
	MaxMessageBytes int `json:"max_message_bytes"`
}

func (o *Options) resolve() error {
	if o.LockDurationSeconds == 0 {
		o.LockDurationSeconds = DefaultLockDurationSeconds
	}
	if o.MaxVisibilitySeconds == 0 {
		o.MaxVisibilitySeconds = DefaultMaxVisibilitySeconds
	}
	if o.MaxMessageBytes == 0 {
		o.MaxMessageBytes = DefaultMaxMessageBytes
	}
	lock := time.Duration(o.LockDurationSeconds) * time.Second
	switch {
	case lock < MinLockDuration || lock > MaxLockDuration:
		return fmt.Errorf("servicebus: lock_duration_seconds %d is outside 5..300", o.LockDurationSeconds)
	case o.MaxVisibilitySeconds < 0 || o.MaxVisibilitySeconds > sqsrule.MaxVisibilityTimeout:
		return fmt.Errorf("servicebus: max_visibility_seconds %d is outside 0..%d", o.MaxVisibilitySeconds, sqsrule.MaxVisibilityTimeout)
	case o.MaxMessageBytes < sqsrule.MinMaximumMessageSize || o.MaxMessageBytes > sqsrule.MaxMessageSize:
		return fmt.Errorf("servicebus: max_message_bytes %d is outside %d..%d", o.MaxMessageBytes, sqsrule.MinMaximumMessageSize, sqsrule.MaxMessageSize)
	case len(o.EntityPrefix) > 100:
		return fmt.Errorf("servicebus: entity_prefix is longer than 100 characters")
	}
	set := 0
	for _, s := range []string{o.ConnectionString, o.Namespace, o.Model} {
		if s != "" {
			set++
		}
	}
	if set > 1 {
		return errors.New("servicebus: set only one of connection_string, namespace and model")
	}
	if set == 0 {
		o.ConnectionString = os.Getenv(ConnectionStringEnv)
		if o.ConnectionString == "" {
			return fmt.Errorf("servicebus: no namespace: set connection_string, namespace or $%s", ConnectionStringEnv)
		}
	}
	return nil
}

func init() {
	drivers.Register("servicebus", func(ctx context.Context, raw map[string]any) (drivers.Driver, error) {
		var o Options
		if err := drivers.DecodeOptions(raw, &o); err != nil {
			return nil, err
		}
		return Open(ctx, o)
	})
}

// Open connects to the namespace the options name and checks that it answers.
func Open(ctx context.Context, o Options) (*Driver, error) {
	if err := o.resolve(); err != nil {
		return nil, err
	}
	var (
		ns      Namespace
		service string
	)
	switch {
	case o.Model != "":
		ns, service = SharedModel(o.Model).Connect(), "in-repo model of Service Bus"
	case o.ConnectionString != "":
		a, err := connectAzure(o.ConnectionString, "", nil)
		if err != nil {
			return nil, fmt.Errorf("servicebus: connection string: %w", err)
		}
		ns, service = a, "Azure Service Bus "+endpointOf(o.ConnectionString)
	default:
		var (
			cred azcore.TokenCredential
			err  error
		)
		if o.ManagedIdentityClientID != "" {
			cred, err = azidentity.NewManagedIdentityCredential(&azidentity.ManagedIdentityCredentialOptions{
				ID: azidentity.ClientID(o.ManagedIdentityClientID)})
		} else {
			cred, err = azidentity.NewDefaultAzureCredential(nil)
		}
		if err != nil {
			return nil, fmt.Errorf("servicebus: Entra ID credential: %w", err)
		}
		a, err := connectAzure("", o.Namespace, cred)
		if err != nil {
			return nil, fmt.Errorf("servicebus: namespace %s: %w", o.Namespace, err)
		}
		ns, service = a, "Azure Service Bus "+o.Namespace
	}
	return NewWithNamespace(ctx, ns, service, o)
}

// NewWithNamespace builds the driver over any Namespace (the model, the SDK adapter);
// service names it in Describe. o's namespace fields are not used.
func NewWithNamespace(ctx context.Context, ns Namespace, service string, o Options) (*Driver, error) {
	if o.Model == "" && o.ConnectionString == "" && o.Namespace == "" {
		o.Model = "-" // resolve must not look for a connection string
	}
	if err := o.resolve(); err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	if _, err := rand.Read(key); err != nil {
		return nil, err
	}
	d := &Driver{NoActivity: drivers.NoActivity{Name: "servicebus", Why: "receives wait in the broker"},
		NoMoveTaskStore: drivers.NoMoveTaskStore{Name: "servicebus"}, ns: ns, service: service, opts: o, key: key, instance: hex.EncodeToString(key[:8]),
		held: map[string]*held{}, expired: map[string]expiredHandle{}, latest: map[seqKey]string{},
		receivers: map[string][]Receiver{}, dedups: map[dedupKey]dedupSeen{}, delayed: map[string][]time.Time{}, scopes: map[string]scopeSeen{}, deleted: map[string]time.Time{}, purged: map[string]time.Time{}}
	if err := d.Ping(ctx); err != nil {
		_ = ns.Close(context.Background())
		return nil, err
	}
	return d, nil
}

func endpointOf(cs string) string {
	for _, part := range strings.Split(cs, ";") {
		if k, v, ok := strings.Cut(part, "="); ok && strings.EqualFold(k, "Endpoint") {
			return strings.TrimSuffix(strings.TrimPrefix(v, "sb://"), "/")
		}
	}
	return "namespace"
}

// Driver is the Azure Service Bus backend. It is safe for concurrent use.
type Driver struct {
	// Receives block in the broker, which hands them messages sent through any gateway,
	// so activity is not awaited; the gateway keeps move tasks in its own memory.
	drivers.NoActivity
	drivers.NoMoveTaskStore

	ns       Namespace
	service  string
	opts     Options
	key      []byte // signs this instance's receipt handles
	instance string // prefix of every receipt handle this instance issues

	mu        sync.Mutex
	closed    bool
	counter   uint64
	held      map[string]*held         // in-flight messages whose locks this instance holds
	expired   map[string]expiredHandle // handles whose visibility ran out
	latest    map[seqKey]string        // the last handle issued per message
	receivers map[string][]Receiver    // idle receivers per standard queue
	dedups    map[dedupKey]dedupSeen   // FIFO sends through this instance, to echo duplicates
	delayed   map[string][]time.Time   // when delayed messages sent through this instance are due
	scopes    map[string]scopeSeen     // FIFO queues' deduplication scopes, read recently
	deleted   map[string]time.Time     // queue deletions, for the name-reuse delay
	purged    map[string]time.Time     // last purge per queue, for the 60-second rule
}

type seqKey struct {
	queue string
	seq   int64
}

type expiredHandle struct {
	key seqKey
	at  time.Time
}

// now is the service's clock as the driver reads it. The driver has no other: lock
// expiry, scheduled enqueue and time-to-live run on the namespace's clock, and the
// visibility deadlines the driver ends itself run on this process's wall clock, which a
// test cannot move either.
func (d *Driver) now() time.Time { return time.Now() }

func (d *Driver) entity(queue string) string { return d.opts.EntityPrefix + queue }

// Ping lists nothing; it asks for one entity that need not exist, which checks the
// credentials and the connection.
func (d *Driver) Ping(ctx context.Context) error {
	_, err := d.ns.GetQueue(ctx, d.entity("anysqs-ping"))
	if err != nil && !errors.Is(err, ErrNotFound) {
		return classify(err, "servicebus: ping "+d.service)
	}
	return nil
}

// Metrics returns nothing: the driver has no series of its own.
func (d *Driver) Metrics(ctx context.Context) ([]drivers.Metric, error) { return nil, nil }

// Close gives up the locks this instance holds and closes the connection. A message
// whose lock would outlast its visibility deadline is abandoned, so it comes back at
// once rather than late; one whose lock ends first is left to it, and comes back when the
// lock runs out, as near its deadline as the broker allows. Closing the connection
// releases the sessions, so FIFO messages in flight come back at once.
func (d *Driver) Close() error {
	d.mu.Lock()
	if d.closed {
		d.mu.Unlock()
		return nil
	}
	d.closed = true
	var hs []*held
	for _, h := range d.held {
		if h.timer != nil {
			h.timer.Stop()
		}
		if h.fifo || h.msg.LockedUntil.After(h.deadline) {
			hs = append(hs, h)
		}
	}
	d.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for _, h := range hs {
		d.release(ctx, h, false)
	}
	d.mu.Lock()
	var rs []Receiver
	for _, list := range d.receivers {
		rs = append(rs, list...)
	}
	d.receivers = map[string][]Receiver{}
	d.mu.Unlock()
	for _, r := range rs {
		_ = r.Close(ctx)
	}
	return d.ns.Close(ctx)
}

// classify wraps a namespace error once with a kind; driver and context errors pass.
func classify(err error, msg string) error {
	var de *drivers.Error
	if errors.As(err, &de) || errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	switch {
	case errors.Is(err, ErrNotFound):
		return drivers.Wrap(drivers.KindNotFound, err, msg)
	case errors.Is(err, ErrExists):
		return drivers.Wrap(drivers.KindAlreadyExists, err, msg)
	}
	var re *azcore.ResponseError
	if errors.As(err, &re) {
		switch {
		case re.StatusCode == 401 || re.StatusCode == 403:
			return drivers.Wrap(drivers.KindFailedPrecondition, err, msg+" (the credential needs Manage rights on the namespace)")
		case re.StatusCode == 429:
			return drivers.Wrap(drivers.KindThrottled, err, msg)
		case re.StatusCode >= 500:
			return drivers.Wrap(drivers.KindUnavailable, err, msg)
		}
	}
	return drivers.Wrap(drivers.KindUnavailable, err, msg)
}

var _ drivers.Driver = (*Driver)(nil)
