// Package sqsclient holds what anysqs's SQS clients (the mq command, the console) share
// beyond aws-sdk-go-v2: naming queues from URLs and ARNs, errors an operator can read,
// and calls of anysqs's extension actions, which the SDK has no methods for.
package sqsclient

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	v4 "github.com/aws/aws-sdk-go-v2/aws/signer/v4"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/smithy-go"
)

// Err names the queue and the SQS error code, the two things an operator needs.
func Err(queue string, err error) error {
	var api smithy.APIError
	if errors.As(err, &api) {
		return fmt.Errorf("queue %s: %s: %s", queue, api.ErrorCode(), api.ErrorMessage())
	}
	return fmt.Errorf("queue %s: %w", queue, err)
}

// QueueName is the name in a queue URL.
func QueueName(u string) string { return u[strings.LastIndex(u, "/")+1:] }

// ARNName is the queue name in a queue ARN.
func ARNName(arn string) string { return arn[strings.LastIndex(arn, ":")+1:] }

// CallExtension calls an anysqs extension action that the SDK has no method for, over
// the AWS JSON protocol, signed with the client's credentials and region and sent with
// its HTTP client.
func CallExtension(ctx context.Context, client *sqs.Client, action string, in, out any) error {
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
