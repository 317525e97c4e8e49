package mq

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sqs/types"

	"github.com/anysqs/anysqs/internal/cli"
	"github.com/anysqs/anysqs/internal/sqsclient"
)

// peekedMessage is a message as `mq peek` prints it: a received message's fields, less
// the receipt handle, with its state.
type peekedMessage struct {
	Message
	State     string `json:"state"`
	VisibleAt string `json:"visible_at,omitempty"`
}

func mqPeek(ctx context.Context, m *mq, fs *cli.Flags, args []string) error {
	q := fs.String("q", "", "`QUEUE` name or URL")
	limit := fs.Int("limit", 10, "at most `N` messages")
	after := fs.String("after", "", "start after this `TOKEN` (the next token a previous peek printed)")
	if err := m.parse(fs, args, "q"); err != nil {
		return err
	}
	if *limit < 1 {
		return cli.Usagef("mq peek: --limit wants 1 or more")
	}
	if err := m.connect(ctx); err != nil {
		return err
	}
	u, err := m.queueURL(ctx, *q)
	if err != nil {
		return err
	}
	var msgs []peekedMessage
	token := *after
	for {
		var out struct {
			Messages []struct {
				types.Message
				State            string `json:"State"`
				VisibleTimestamp string `json:"VisibleTimestamp"`
			} `json:"Messages"`
			NextToken string `json:"NextToken"`
		}
		in := map[string]any{"QueueUrl": u, "MaxNumberOfMessages": min(100, *limit-len(msgs))}
		if token != "" {
			in["NextToken"] = token
		}
		if err := sqsclient.CallExtension(ctx, m.client, "AnysqsPeekMessages", in, &out); err != nil {
			return sqsclient.Err(*q, err)
		}
		for _, p := range out.Messages {
			pm := peekedMessage{Message: toMessage(p.Message), State: p.State}
			pm.ReceiptHandle = ""
			if n, err := strconv.ParseInt(p.VisibleTimestamp, 10, 64); err == nil {
				pm.VisibleAt = time.UnixMilli(n).UTC().Format(time.RFC3339)
			}
			msgs = append(msgs, pm)
		}
		token = out.NextToken
		if token == "" || len(msgs) >= *limit {
			break
		}
	}
	if msgs == nil {
		msgs = []peekedMessage{}
	}
	return m.emit(map[string]any{"messages": msgs, "next_token": token}, func(w io.Writer) {
		fmt.Fprintln(w, "MESSAGE ID\tSTATE\tRECEIVES\tVISIBLE AT\tBODY")
		for _, p := range msgs {
			body := p.Body
			if len(body) > 60 {
				body = body[:57] + "..."
			}
			fmt.Fprintf(w, "%s\t%s\t%d\t%s\t%s\n", p.MessageID, p.State, p.System.ApproximateReceiveCount, p.VisibleAt, strconv.Quote(body))
		}
		if token != "" {
			fmt.Fprintf(w, "more: anysqs mq peek -q %s --after %s\n", *q, token)
		}
	})
}
