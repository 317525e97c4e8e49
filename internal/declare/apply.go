package declare

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/anysqs/anysqs/internal/cli"
	"github.com/anysqs/anysqs/internal/mq"
)

const applyAbout = `Apply queue declarations to a running gateway (any backend) or to AWS SQS: print
the plan (+ create, ~ update, = unchanged), then carry it out. Queues are created
dead-letter queues first; declared attributes and tags that differ are set; nothing the
file does not declare is changed, and no queue is deleted.

FILE is a file with a queues: list (a gateway configuration will do; its queues_file is
followed). With --dry-run nothing changes, and the exit status is 2 when the plan has
changes, 0 when it has none. Entries with an account: are applied only when --account
names that account (the key you sign with must belong to it); the others are skipped.
Connection flags as in anysqs mq: --endpoint URL (default $ANYSQS_ENDPOINT, else
http://127.0.0.1:9324) or --endpoint aws for AWS SQS itself.`

// RunApply runs anysqs apply with args (after "apply").
func RunApply(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var conn mq.Conn
	fs := cli.NewFlags("apply", "-f FILE [--dry-run] [connection flags]", applyAbout)
	file := fs.String("f", "", "declarations `FILE` (a queues: list)")
	fs.StringVar(file, "file", "", "declarations `FILE`, as -f")
	dry := fs.Bool("dry-run", false, "print the plan and change nothing; exit status 2 if it has changes")
	account := fs.String("account", "", "the 12-digit `ACCOUNT` the signing key belongs to, for entries that name one")
	conn.Flags(fs)
	if err := fs.ParseArgs(args, stdout); err != nil {
		return err
	}
	if err := fs.NoArgs(); err != nil {
		return err
	}
	if *file == "" {
		return cli.Usagef("apply: -f FILE is required (see anysqs apply --help)")
	}
	if *account != "" && !isAccountID(*account) {
		return cli.Usagef("apply: --account %q: want 12 digits", *account)
	}
	qs, err := ParseFile(*file)
	if err != nil {
		return err
	}
	if len(qs) == 0 {
		return fmt.Errorf("%s declares no queues (want a queues: list)", *file)
	}
	cfg, endpoint, err := conn.Config(ctx)
	if err != nil {
		return err
	}
	client := sqs.NewFromConfig(cfg, WithDegraded, func(o *sqs.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	})
	target := NewSQS(client)
	targets := func(acct string) (Target, error) {
		if acct == "" || acct == *account {
			return target, nil
		}
		return nil, fmt.Errorf("%w: account %s; sign with a key of that account and pass --account %s", ErrSkip, acct, acct)
	}
	plan, err := Plan(ctx, targets, qs)
	if err != nil {
		return err
	}
	Print(stdout, plan)
	create, update, _, _ := Counts(plan)
	if *dry {
		if create+update > 0 {
			return &cli.StatusError{Code: 2, Msg: fmt.Sprintf("apply --dry-run: %d to create, %d to update (nothing changed)", create, update)}
		}
		return nil
	}
	if create+update == 0 {
		return nil
	}
	applied := 0
	err = Apply(ctx, targets, plan, func(c Change) {
		applied++
		if len(c.Degraded) > 0 {
			fmt.Fprintf(stdout, "! %s: the gateway serves %s degraded (docs/compat)\n", c.Label(), strings.Join(c.Degraded, ", "))
		}
	})
	if err != nil {
		return fmt.Errorf("after %d of %d changes: %w", applied, create+update, err)
	}
	fmt.Fprintf(stdout, "Applied: %d created, %d updated.\n", create, update)
	return nil
}
