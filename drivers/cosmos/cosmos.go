package cosmos

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azidentity"
	"github.com/Azure/azure-sdk-for-go/sdk/data/azcosmos"

	"github.com/anysqs/anysqs/drivers"
	"github.com/anysqs/anysqs/drivers/sqsrule"
)

// Version is the driver's version, as Describe reports it.
const Version = "0.1.0"

// Options configure the driver; see the package doc's Configuration section.
type Options struct {
	Endpoint  string `json:"endpoint"`
	Key       string `json:"key"`
	Database  string `json:"database"`
	Container string `json:"container"`
	// CreateContainer creates the database and container when missing (partition key
	// /pk, per-item TTL on); otherwise they must exist.
	CreateContainer bool `json:"create_container"`
	// Throughput is the manual RU/s of a container the driver creates (0: the account's
	// default; serverless accounts take none).
	Throughput int32 `json:"throughput"`
	// InsecureSkipVerify accepts any TLS certificate: for local emulators only.
	InsecureSkipVerify bool `json:"insecure_skip_verify"`
	// RequestTimeout bounds one Cosmos request, 429 retries included (default 10s).
	RequestTimeout string `json:"request_timeout"`
	// PollInterval is the longest a waiting receive goes without re-checking (default 1s).
	PollInterval string `json:"poll_interval"`
	// QueryReads reads items that may be missing with a one-item query instead of a
	// point read, for an emulator that answers a missing item with 500. Costs more RU.
	QueryReads bool `json:"query_reads"`
	// BatchPartitionKeys writes a transactional batch's partition key into each of its
	// operations as well as its header, for an emulator that reads it there
	// (@vercel/cosmosdb-server, which fails every FIFO send without it).
	BatchPartitionKeys bool `json:"batch_partition_keys"`
	// Transport replaces the HTTP transport (tests: a fault injector); not configurable
	// from YAML.
	Transport policy.Transporter `json:"-"`
}

// Driver is the Cosmos DB driver.
type Driver struct {
	// Cosmos has no notification a waiting receive could block on short of the change
	// feed, so the gateway polls (drivers.ActivityPoll); it keeps move tasks in its own
	// memory too.
	drivers.NoActivity
	drivers.NoMoveTaskStore

	client   *azcosmos.Client
	c        *azcosmos.ContainerClient
	opts     Options
	timeout  time.Duration
	poll     time.Duration
	secret   []byte
	metrics  *ruMetrics
	warnings []string // for Describe, found at open
	// fifoWindow is how many of a FIFO queue's oldest messages one receive reads.
	fifoWindow int
}

func init() {
	drivers.Register("cosmos", func(ctx context.Context, raw map[string]any) (drivers.Driver, error) {
		var o Options
		if err := drivers.DecodeOptions(raw, &o); err != nil {
			return nil, err
		}
		return Open(ctx, o)
	})
}

// Open connects to the account, checks (or creates) the container and loads the
// receipt-handle key kept in it. Without a key in o, the key is $ANYSQS_COSMOS_KEY, and
// without that the credential is Entra ID's (azidentity.DefaultAzureCredential).
func Open(ctx context.Context, o Options) (*Driver, error) {
	if o.Endpoint == "" {
		return nil, fmt.Errorf("cosmos: endpoint is required")
	}
	if o.Database == "" {
		o.Database = "anysqs"
	}
	if o.Container == "" {
		o.Container = "queues"
	}
	d := &Driver{NoActivity: drivers.NoActivity{Name: "cosmos", Why: "no activity notification; the gateway polls"},
		NoMoveTaskStore: drivers.NoMoveTaskStore{Name: "cosmos"}, opts: o, timeout: 10 * time.Second, poll: time.Second, metrics: newRUMetrics(), fifoWindow: fifoWindow}
	var err error
	if o.RequestTimeout != "" {
		if d.timeout, err = time.ParseDuration(o.RequestTimeout); err != nil || d.timeout <= 0 {
			return nil, fmt.Errorf("cosmos: request_timeout %q is not a positive duration", o.RequestTimeout)
		}
	}
	if o.PollInterval != "" {
		if d.poll, err = time.ParseDuration(o.PollInterval); err != nil || d.poll <= 0 {
			return nil, fmt.Errorf("cosmos: poll_interval %q is not a positive duration", o.PollInterval)
		}
	}
	// The driver retries 429s itself, within the request's deadline, and nothing else:
	// a write whose outcome is unknown is the client's to retry.
	copts := &azcosmos.ClientOptions{ClientOptions: azcore.ClientOptions{Retry: policy.RetryOptions{MaxRetries: -1}}}
	switch {
	case o.Transport != nil:
		copts.Transport = o.Transport
	case o.InsecureSkipVerify:
		copts.Transport = &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}}}
	}
	if o.BatchPartitionKeys {
		copts.PerCallPolicies = append(copts.PerCallPolicies, batchPartitionKeys{})
	}
	if o.Key == "" {
		o.Key = os.Getenv("ANYSQS_COSMOS_KEY")
	}
	if o.Key != "" {
		cred, err := azcosmos.NewKeyCredential(o.Key)
		if err != nil {
			return nil, fmt.Errorf("cosmos: key: %w", err)
		}
		d.client, err = azcosmos.NewClientWithKey(o.Endpoint, cred, copts)
		if err != nil {
			return nil, fmt.Errorf("cosmos: client: %w", err)
		}
	} else {
		cred, err := azidentity.NewDefaultAzureCredential(nil)
		if err != nil {
			return nil, fmt.Errorf("cosmos: no key given and no Entra ID credential: %w", err)
		}
		d.client, err = azcosmos.NewClient(o.Endpoint, cred, copts)
		if err != nil {
			return nil, fmt.Errorf("cosmos: client: %w", err)
		}
	}
	if o.CreateContainer {
		if err := d.ensureContainer(ctx); err != nil {
			return nil, err
		}
	}
	if d.c, err = d.client.NewContainer(o.Database, o.Container); err != nil {
		return nil, fmt.Errorf("cosmos: container: %w", err)
	}
	if err := d.checkContainer(ctx); err != nil {
		return nil, err
	}
	if err := d.loadSecret(ctx); err != nil {
		return nil, err
	}
	return d, nil
}

// ensureContainer creates the database and container if they are missing.
func (d *Driver) ensureContainer(ctx context.Context) error {
	_, err := d.client.CreateDatabase(ctx, azcosmos.DatabaseProperties{ID: d.opts.Database}, nil)
	if err != nil && statusOf(err) != http.StatusConflict {
		return mapErr(ctx, err, "create database "+d.opts.Database)
	}
	db, err := d.client.NewDatabase(d.opts.Database)
	if err != nil {
		return fmt.Errorf("cosmos: database: %w", err)
	}
	ttl := int32(-1) // per-item ttl applies; items without one never expire
	props := azcosmos.ContainerProperties{ID: d.opts.Container, DefaultTimeToLive: &ttl,
		PartitionKeyDefinition: azcosmos.PartitionKeyDefinition{Paths: []string{"/pk"}}}
	var co *azcosmos.CreateContainerOptions
	if d.opts.Throughput > 0 {
		tp := azcosmos.NewManualThroughputProperties(d.opts.Throughput)
		co = &azcosmos.CreateContainerOptions{ThroughputProperties: &tp}
	}
	_, err = db.CreateContainer(ctx, props, co)
	if err != nil && statusOf(err) != http.StatusConflict {
		return mapErr(ctx, err, "create container "+d.opts.Container)
	}
	return nil
}

// checkContainer fails clearly when the container is missing or not partitioned on /pk.
func (d *Driver) checkContainer(ctx context.Context) error {
	var resp azcosmos.ContainerResponse
	err := d.call(ctx, "open", func(ctx context.Context) (float32, error) {
		var err error
		resp, err = d.c.Read(ctx, nil)
		return resp.RequestCharge, err
	})
	if statusOf(err) == http.StatusNotFound {
		return fmt.Errorf("cosmos: container %s/%s does not exist: create it (partition key /pk) or set create_container", d.opts.Database, d.opts.Container)
	}
	if err != nil {
		return mapErr(ctx, err, "open: read container "+d.opts.Container)
	}
	if p := resp.ContainerProperties; p != nil {
		if len(p.PartitionKeyDefinition.Paths) != 1 || p.PartitionKeyDefinition.Paths[0] != "/pk" {
			return fmt.Errorf("cosmos: container %s/%s is partitioned on %v; the driver needs /pk", d.opts.Database, d.opts.Container, p.PartitionKeyDefinition.Paths)
		}
		if p.DefaultTimeToLive == nil {
			d.warnings = append(d.warnings, "container "+d.opts.Container+" has TTL off: items the sweep never reaches "+
				"(those of an interrupted delete, say) stay until removed by hand; set the container's default TTL to -1 (on, no default)")
		}
	}
	return nil
}

// catalogPK is the logical partition holding every queue's record and the driver's key.
const catalogPK = "catalog"

type secretDoc struct {
	ID  string `json:"id"`
	PK  string `json:"pk"`
	Key string `json:"key"`
}

// loadSecret reads the receipt-handle MAC key, creating it on a new container. Create
// is conditional on absence, so instances opening at once agree on one key.
func (d *Driver) loadSecret(ctx context.Context) error {
	var lost error // the last create that lost to another instance's
	for attempt := 0; attempt < 2; attempt++ {
		var doc secretDoc
		_, found, err := d.readItem(ctx, "open", catalogPK, "secret", &doc)
		if err != nil {
			return err
		}
		if found {
			d.secret, err = hex.DecodeString(doc.Key)
			if err == nil && len(d.secret) < 16 {
				err = fmt.Errorf("%d bytes, want at least 16", len(d.secret))
			}
			if err != nil {
				return drivers.Wrap(drivers.KindInternal, err, "cosmos: the stored receipt key is malformed")
			}
			return nil
		}
		b, err := sqsrule.NewKey()
		if err != nil {
			return err
		}
		doc = secretDoc{ID: "secret", PK: catalogPK, Key: hex.EncodeToString(b)}
		_, err = d.create(ctx, "open", catalogPK, doc)
		if err == nil {
			d.secret = b
			return nil
		}
		if statusOf(err) != http.StatusConflict {
			return mapErr(ctx, err, "open: create the receipt key")
		}
		lost = err
	}
	return &drivers.Error{Kind: drivers.KindInternal, Message: "cosmos: could not read or create the receipt key", Err: lost}
}

// Close returns nil: the SDK's client holds only idle HTTP connections.
func (d *Driver) Close() error { return nil }

// Ping reads the container's properties.
func (d *Driver) Ping(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, d.timeout)
	defer cancel()
	_, err := d.c.Read(ctx, nil)
	return mapErr(ctx, err, "ping")
}

func newID() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// ms is a gateway-clock time as stored: milliseconds since the epoch (0 for zero).
func ms(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.UnixMilli()
}

func fromMS(v int64) time.Time {
	if v == 0 {
		return time.Time{}
	}
	return time.UnixMilli(v).UTC()
}

// mustJSON encodes an item. HTML escaping is off: it would store each '<', '>' and '&'
// of a body as six bytes, against the 2 MB item limit.
func mustJSON(v any) []byte {
	if m, ok := v.(msgDoc); ok {
		v = m.packed()
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic("cosmos: encode: " + err.Error()) // only plain structs are encoded
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n"))
}

// queuePK is the logical partition of one incarnation of a queue: its messages,
// sequence head, deduplication markers and receive attempts.
func queuePK(name, inc string) string { return "q/" + name + "/" + inc }

// DropContainer deletes the container o names: for tests and tear-down tools.
func DropContainer(ctx context.Context, o Options) error {
	d, err := Open(ctx, Options{Endpoint: o.Endpoint, Key: o.Key, Database: o.Database, Container: o.Container,
		InsecureSkipVerify: o.InsecureSkipVerify, QueryReads: o.QueryReads, Transport: o.Transport})
	if err != nil {
		return err
	}
	_, err = d.c.Delete(ctx, nil)
	return mapErr(ctx, err, "delete container")
}
