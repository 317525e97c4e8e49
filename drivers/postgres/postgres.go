package postgres

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/anysqs/anysqs/drivers"
)

// Version is the driver's version, reported by Describe.
const Version = "0.1.0"

// DSNEnv is the environment variable read when Options.DSN is empty. When it is empty
// too, the standard libpq variables (PGHOST, PGPORT, PGUSER, PGDATABASE, ...) apply.
const DSNEnv = "ANYSQS_POSTGRES_DSN"

// Options configure the driver. They are the `backend.options` section of the gateway's
// configuration file.
type Options struct {
	// DSN is a libpq connection string, URL or key=value form. Empty: $ANYSQS_POSTGRES_DSN,
	// then the PG* environment variables.
	DSN string `json:"dsn"`
	// ListenDSN, when set, is the DSN of the one connection that LISTENs for activity
	// (the pool uses DSN): the same database, reached directly while DSN goes through
	// PgBouncer, so that a gateway that dies cannot leave LISTEN state in a pooled server
	// connection (see closeListening). TLS and PasswordFile apply to it too.
	ListenDSN string `json:"listen_dsn"`
	// Schema holds the driver's tables; created if missing. Default "anysqs".
	Schema string `json:"schema"`
	// MaxConns caps the pool. Default 16: on small machines more connections only add
	// contention (see the package doc).
	MaxConns int32 `json:"max_conns"`
	// CreateDatabase creates the DSN's database when it does not exist, connecting to the
	// "postgres" maintenance database of the same server to do so.
	CreateDatabase bool `json:"create_database"`
	// TLS overrides the DSN's sslmode and certificate settings when set.
	TLS *TLSOptions `json:"tls"`
	// PasswordFile names a file whose content (one trailing newline ignored) is the
	// password, read again for every new connection: a password or token that something
	// else rotates in the file (RDS IAM, Entra ID, Vault) takes effect without a restart.
	PasswordFile string `json:"password_file"`
	// NotifyInTransaction sends each send's NOTIFY inside its transaction instead of
	// after commit: no wake-up is lost even when a gateway dies right after a commit, at
	// a large cost in send throughput (see the package doc).
	NotifyInTransaction bool `json:"notify_in_transaction"`
	// VacuumOnSweep runs VACUUM (ANALYZE) on the driver's tables at the end of each
	// retention sweep this driver performs (every 30 seconds by default, one gateway at a
	// time): for servers whose autovacuum is off, where dead rows would otherwise pile up
	// and slow receives down (see the package doc).
	VacuumOnSweep bool `json:"vacuum_on_sweep"`
}

// TLSOptions select how the driver secures its connections. They map onto libpq's
// sslmode, sslrootcert, sslcert and sslkey.
type TLSOptions struct {
	// Mode is disable, allow, prefer, require, verify-ca or verify-full.
	Mode     string `json:"mode"`
	CAFile   string `json:"ca_file"`
	CertFile string `json:"cert_file"`
	KeyFile  string `json:"key_file"`
}

// Driver is the PostgreSQL backend. It is safe for concurrent use.
type Driver struct {
	pool     *pgxpool.Pool
	schema   string
	channel  string // NOTIFY channel shared by every gateway on this schema
	keys     lockKeys
	lis      *listener
	notes    *notifier
	notifyTx bool
	// receiptKey seals receipt handles; every gateway on the schema reads the same one.
	receiptKey []byte
	vacuum     bool // VacuumOnSweep
	sends      *batcher[timedSend, drivers.SendEntryResult]
	// fifoSends merges FIFO sends; entries weigh one each (see maxMergedFIFOSends).
	fifoSends *batcher[timedSend, drivers.SendEntryResult]
	deletes   *batcher[timedDelete, drivers.EntryResult]
	fair      groupedQueues // standard queues with message groups (fair.go)
	receives  *batcher[recvCall, claimResult]

	closeOnce sync.Once
}

var _ drivers.Driver = (*Driver)(nil)

func init() {
	drivers.Register("postgres", func(ctx context.Context, raw map[string]any) (drivers.Driver, error) {
		var o Options
		if err := drivers.DecodeOptions(raw, &o); err != nil {
			return nil, err
		}
		return Open(ctx, o)
	})
}

// Open connects, migrates the schema and starts listening for other gateways' activity.
func Open(ctx context.Context, o Options) (*Driver, error) {
	if o.Schema == "" {
		o.Schema = defaultSchema
	}
	cfg, err := poolConfig(o)
	if err != nil {
		return nil, drivers.Wrap(drivers.KindInvalidArgument, err, "postgres options")
	}
	listenCfg := cfg
	if o.ListenDSN != "" {
		lo := o
		lo.DSN = o.ListenDSN
		if listenCfg, err = poolConfig(lo); err != nil {
			return nil, drivers.Wrap(drivers.KindInvalidArgument, err, "postgres options: listen_dsn")
		}
	}
	if o.CreateDatabase {
		if err := createDatabase(ctx, cfg); err != nil {
			return nil, err
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, drivers.Wrap(drivers.KindInvalidArgument, err, "postgres pool")
	}
	d := &Driver{pool: pool, schema: o.Schema, channel: "anysqs:" + o.Schema, keys: newLockKeys(o.Schema),
		notifyTx: o.NotifyInTransaction, vacuum: o.VacuumOnSweep}
	if err := d.migrate(ctx); err != nil {
		pool.Close()
		return nil, err
	}
	lis, err := startListener(ctx, listenCfg, o.ListenDSN != "", d.channel, d.pool)
	if err != nil {
		pool.Close()
		return nil, err
	}
	d.lis = lis
	d.notes = startNotifier(pool, d.channel)
	d.sends = newBatcher(maxMergedSends, sendWeight, d.insertStandard)
	d.fifoSends = newBatcher(maxMergedFIFOSends, weighOne[timedSend], d.insertFIFO)
	d.deletes = newBatcher(maxMergedDeletes, weighOne[timedDelete], d.deleteMerged)
	d.receives = newBatcher(maxMergedReceives, func(c recvCall) int { return c.max }, d.claimCalls)
	return d, nil
}

const defaultSchema = "anysqs"

func poolConfig(o Options) (*pgxpool.Config, error) {
	dsn := o.DSN
	if dsn == "" {
		dsn = os.Getenv(DSNEnv)
	}
	if o.TLS != nil {
		var err error
		if dsn, err = withTLS(dsn, o.TLS); err != nil {
			return nil, err
		}
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, err
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = "anysqs"
	// The schema and the plan mode are set by statement, not as startup parameters:
	// PgBouncer refuses a connection whose startup packet carries parameters it does not
	// know ("unsupported startup parameter"), and these are two of them.
	setup := "SET search_path = " + pgx.Identifier{o.Schema}.Sanitize() + "; SET plan_cache_mode = force_generic_plan"
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		_, err := c.Exec(ctx, setup)
		return err
	}
	if o.PasswordFile != "" {
		file := o.PasswordFile
		cfg.BeforeConnect = func(_ context.Context, cc *pgx.ConnConfig) error { return readPassword(file, cc) }
	}
	cfg.MaxConns = 16
	if o.MaxConns > 0 {
		cfg.MaxConns = o.MaxConns
	}
	// Idle connections are pinged on acquire (pgxpool's default after 1 s idle), so after a
	// database restart dead connections are dropped on first use; a short health check
	// period clears the rest in the background.
	cfg.HealthCheckPeriod = 5 * time.Second
	return cfg, nil
}

// readPassword sets cc's password from file.
func readPassword(file string, cc *pgx.ConnConfig) error {
	b, err := os.ReadFile(file)
	if err != nil {
		return drivers.Wrap(drivers.KindUnavailable, err, "password_file")
	}
	cc.Password = strings.TrimSuffix(strings.TrimSuffix(string(b), "\n"), "\r")
	return nil
}

// connect opens a connection outside the pool (the LISTEN one, the one that creates the
// database) as the pool opens its own: with a fresh password from password_file.
func connect(ctx context.Context, pc *pgxpool.Config, cc *pgx.ConnConfig) (*pgx.Conn, error) {
	if pc.BeforeConnect != nil {
		cc = cc.Copy()
		if err := pc.BeforeConnect(ctx, cc); err != nil {
			return nil, err
		}
	}
	return pgx.ConnectConfig(ctx, cc)
}

// withTLS adds libpq TLS parameters to dsn in whichever form it is written.
func withTLS(dsn string, t *TLSOptions) (string, error) {
	params := [][2]string{{"sslmode", t.Mode}, {"sslrootcert", t.CAFile}, {"sslcert", t.CertFile}, {"sslkey", t.KeyFile}}
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err != nil {
			// url's errors quote the whole URL, password included; pgx's mask it.
			if _, perr := pgconn.ParseConfig(dsn); perr != nil {
				return "", perr
			}
			return "", errors.New("the tls options need a DSN that parses as a single URL")
		}
		q := u.Query()
		for _, p := range params {
			if p[1] != "" {
				q.Set(p[0], p[1])
			}
		}
		u.RawQuery = q.Encode()
		return u.String(), nil
	}
	var b strings.Builder
	b.WriteString(dsn)
	for _, p := range params {
		if p[1] != "" {
			fmt.Fprintf(&b, " %s='%s'", p[0], strings.NewReplacer(`\`, `\\`, `'`, `\'`).Replace(p[1]))
		}
	}
	return b.String(), nil
}

// createDatabase creates pc's database through the server's maintenance database. A
// concurrent creation by another gateway is not an error.
func createDatabase(ctx context.Context, pc *pgxpool.Config) error {
	cc := pc.ConnConfig
	admin := cc.Copy()
	admin.Database = "postgres"
	conn, err := connect(ctx, pc, admin)
	if err != nil {
		return mapErr(ctx, err, "connect to create database")
	}
	defer conn.Close(context.Background())
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = $1)`, cc.Database).Scan(&exists); err != nil {
		return mapErr(ctx, err, "look up database")
	}
	if exists {
		return nil
	}
	_, err = conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{cc.Database}.Sanitize())
	var pe *pgconn.PgError
	if errors.As(err, &pe) && (pe.Code == "42P04" || pe.Code == "23505") {
		return nil // created meanwhile by another instance
	}
	return mapErr(ctx, err, "create database "+cc.Database)
}

// Close stops listening and closes the pool.
func (d *Driver) Close() error {
	d.closeOnce.Do(func() {
		d.notes.close()
		d.lis.close()
		d.pool.Close()
	})
	return nil
}

// mapErr wraps a native error once with a kind. Context errors pass through as they are;
// anything that is not an answer from the server (broken connection, refused dial,
// server shutting down) is KindUnavailable, because the outcome of a write is unknown.
func mapErr(ctx context.Context, err error, what string) error {
	if err == nil {
		return nil
	}
	if ctxErr := ctx.Err(); ctxErr != nil && (errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded)) {
		return ctxErr
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	var de *drivers.Error
	if errors.As(err, &de) {
		return err
	}
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		if pe.Code == "42P05" || pe.Code == "26000" {
			// The driver's prepared statements are per connection and pgx tracks them, so
			// one that exists already or has vanished means the server connection changed
			// under the client connection.
			what += " (a transaction-pooling proxy between the gateway and PostgreSQL? anysqs needs a direct connection or session pooling)"
		}
		return drivers.Wrap(pgKind(pe.Code), err, what)
	}
	return drivers.Wrap(drivers.KindUnavailable, err, what)
}

// pgKind classifies a server error by SQLSTATE class.
func pgKind(code string) drivers.Kind {
	switch {
	case strings.HasPrefix(code, "08"), // connection exception
		strings.HasPrefix(code, "57P"), // admin/crash shutdown, cannot connect now
		strings.HasPrefix(code, "40"),  // serialization failure, deadlock: rolled back, retry is safe
		strings.HasPrefix(code, "28"),  // authentication refused: a rotated password not yet in place
		code == "25006":                // read-only transaction: a standby during failover
		return drivers.KindUnavailable
	case strings.HasPrefix(code, "53"), code == "55P03": // out of resources, lock not available
		return drivers.KindThrottled
	case strings.HasPrefix(code, "22"): // data exception: a value the schema cannot hold
		return drivers.KindInvalidArgument
	}
	return drivers.KindInternal
}
