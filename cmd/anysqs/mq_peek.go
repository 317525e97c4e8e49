package main

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go"
)

// peekedMessage is a message as `mq peek` prints it: a received message's fields, less
// the receipt handle, with its state.
type peekedMessage struct {
	message
	State     string `json:"state"`
	VisibleAt string `json:"visible_at,omitempty"`
}

func mqPeek(ctx context.Context, m *mq, fs *flags, args []string) error {
	q := fs.String("q", "", "`QUEUE` name or URL")
	limit := fs.Int("limit", 10, "at most `N` messages")
	after := fs.String("after", "", "start after this `TOKEN` (the next token a previous peek printed)")
	if err := m.parse(fs, args, "q"); err != nil {
		return err
	}
	if *limit < 1 {
		return usagef("mq peek: --limit wants 1 or more")
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
		if err := callExtension(ctx, m.client, "AnysqsPeekMessages", in, &out); err != nil {
			return sqsErr(*q, err)
		}
		for _, p := range out.Messages {
			pm := peekedMessage{message: toMessage(p.Message), State: p.State}
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

// callExtension calls an anysqs extension action that the SDK has no method for, over
// the AWS JSON protocol, signed with the client's credentials and region and sent with
// its HTTP client.
func callExtension(ctx context.Context, client *sqs.Client, action string, in, out any) error {
	opts := client.Options()
	if opts.BaseEndpoint == nil {
		return fmt.Errorf("%s is an anysqs action: AWS SQS has none", action)
	}
	body, err := json.Marshal(in)
	if err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(*opts.BaseEndpoint, "/")+"/", bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/x-amz-json-1.0")
	req.Header.Set("X-Amz-Target", "AmazonSQS."+action)
	creds, err := opts.Credentials.Retrieve(ctx)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(body)
	if err := v4.NewSigner().SignHTTP(ctx, creds, req, hex.EncodeToString(sum[:]), "sqs", opts.Region, time.Now()); err != nil {
		return err
	}
	var hc sqs.HTTPClient = http.DefaultClient
	if opts.HTTPClient != nil {
		hc = opts.HTTPClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		var e struct {
			Type    string `json:"__type"`
			Message string `json:"message"`
		}
		if json.Unmarshal(raw, &e) != nil || e.Type == "" {
			return fmt.Errorf("%s: %s", action, resp.Status)
		}
		return &smithy.GenericAPIError{Code: e.Type[strings.LastIndex(e.Type, "#")+1:], Message: e.Message}
	}
	return json.Unmarshal(raw, out)
}
