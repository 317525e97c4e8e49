package declare

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
	"github.com/aws/aws-sdk-go-v2/service/sqs/types"
	"github.com/aws/smithy-go/middleware"
	smithyhttp "github.com/aws/smithy-go/transport/http"

	"github.com/anysqs/anysqs/capabilities"
)

// SQS is a Target over the SQS API: a gateway's endpoint, or AWS SQS itself. Build its
// client with WithDegraded among the options to learn what an anysqs gateway degraded.
type SQS struct {
	Client *sqs.Client
	mu     sync.Mutex
	urls   map[string]string
}

// NewSQS returns the target of the account client signs for.
func NewSQS(client *sqs.Client) *SQS { return &SQS{Client: client, urls: map[string]string{}} }

func (t *SQS) url(ctx context.Context, name string) (string, bool, error) {
	t.mu.Lock()
	u, ok := t.urls[name]
	t.mu.Unlock()
	if ok {
		return u, true, nil
	}
	out, err := t.Client.GetQueueUrl(ctx, &sqs.GetQueueUrlInput{QueueName: aws.String(name)})
	var missing *types.QueueDoesNotExist
	if errors.As(err, &missing) {
		return "", false, nil
	}
	if err != nil {
		return "", false, err
	}
	t.remember(name, aws.ToString(out.QueueUrl))
	return aws.ToString(out.QueueUrl), true, nil
}

func (t *SQS) remember(name, url string) {
	t.mu.Lock()
	t.urls[name] = url
	t.mu.Unlock()
}

// Get implements Target.
func (t *SQS) Get(ctx context.Context, name string, tags bool) (Current, bool, error) {
	u, found, err := t.url(ctx, name)
	if err != nil || !found {
		return Current{}, false, err
	}
	attrs, err := t.Client.GetQueueAttributes(ctx, &sqs.GetQueueAttributesInput{
		QueueUrl: aws.String(u), AttributeNames: []types.QueueAttributeName{types.QueueAttributeNameAll}})
	var missing *types.QueueDoesNotExist
	if errors.As(err, &missing) {
		return Current{}, false, nil // deleted since its URL was read
	}
	if err != nil {
		return Current{}, false, err
	}
	cur := Current{Attributes: attrs.Attributes}
	if tags {
		out, err := t.Client.ListQueueTags(ctx, &sqs.ListQueueTagsInput{QueueUrl: aws.String(u)})
		if err != nil {
			return Current{}, false, err
		}
		cur.Tags = out.Tags
	}
	return cur, true, nil
}

// Create implements Target.
func (t *SQS) Create(ctx context.Context, name string, attrs, tags map[string]string) (Result, error) {
	var res Result
	in := &sqs.CreateQueueInput{QueueName: aws.String(name), Attributes: attrs}
	if len(tags) > 0 {
		in.Tags = tags
	}
	out, err := t.Client.CreateQueue(recording(ctx, &res), in)
	if err != nil {
		return res, err
	}
	t.remember(name, aws.ToString(out.QueueUrl))
	return res, nil
}

// SetAttributes implements Target.
func (t *SQS) SetAttributes(ctx context.Context, name string, attrs map[string]string) (Result, error) {
	var res Result
	u, _, err := t.url(ctx, name)
	if err != nil {
		return res, err
	}
	_, err = t.Client.SetQueueAttributes(recording(ctx, &res), &sqs.SetQueueAttributesInput{QueueUrl: aws.String(u), Attributes: attrs})
	return res, err
}

// Tag implements Target.
func (t *SQS) Tag(ctx context.Context, name string, tags map[string]string) (Result, error) {
	var res Result
	u, _, err := t.url(ctx, name)
	if err != nil {
		return res, err
	}
	_, err = t.Client.TagQueue(recording(ctx, &res), &sqs.TagQueueInput{QueueUrl: aws.String(u), Tags: tags})
	return res, err
}

type resultKey struct{}

func recording(ctx context.Context, res *Result) context.Context {
	return context.WithValue(ctx, resultKey{}, res)
}

// WithDegraded is a client option that records an anysqs gateway's X-Anysqs-Degraded
// header in the Result of the call.
func WithDegraded(o *sqs.Options) {
	o.APIOptions = append(o.APIOptions, func(stack *middleware.Stack) error {
		return stack.Deserialize.Add(middleware.DeserializeMiddlewareFunc("anysqsDegraded",
			func(ctx context.Context, in middleware.DeserializeInput, next middleware.DeserializeHandler) (
				middleware.DeserializeOutput, middleware.Metadata, error) {
				out, md, err := next.HandleDeserialize(ctx, in)
				res, _ := ctx.Value(resultKey{}).(*Result)
				if resp, ok := out.RawResponse.(*smithyhttp.Response); ok && res != nil {
					if h := resp.Header.Get(capabilities.HeaderDegraded); h != "" {
						res.Degraded = append(res.Degraded, strings.Split(h, ",")...)
					}
				}
				return out, md, err
			}), middleware.After)
	})
}

// Key is an access key of an account, for signing requests in process.
type Key struct{ ID, Secret string }

// InProcess returns the targets of the gateway h, whose requests go straight to it
// without a network: exactly the checks, capability policy and errors its clients get.
// keys gives each account's access key when the gateway verifies signatures; an
// account without one ("" is the gateway's own) cannot be applied to.
func InProcess(h http.Handler, region string, keys map[string]Key) Targets {
	hc := &http.Client{Transport: handlerTransport{h}}
	targets := map[string]Target{}
	var mu sync.Mutex
	return func(account string) (Target, error) {
		mu.Lock()
		defer mu.Unlock()
		if t, ok := targets[account]; ok {
			return t, nil
		}
		k, ok := keys[account]
		if !ok && keys != nil {
			return nil, errors.New("account " + account + ": no access key of that account in auth.credentials, so its queues cannot be declared")
		}
		if !ok {
			k = Key{"anysqs", "anysqs"} // a gateway without auth takes any signature
		}
		client := sqs.New(sqs.Options{
			Region:       region,
			BaseEndpoint: aws.String("http://anysqs.internal"),
			Credentials:  credentials.NewStaticCredentialsProvider(k.ID, k.Secret, ""),
			HTTPClient:   hc,
		}, WithDegraded)
		t := NewSQS(client)
		targets[account] = t
		return t, nil
	}
}

// handlerTransport serves each request with h, in process.
type handlerTransport struct{ h http.Handler }

func (t handlerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	r.RemoteAddr = "127.0.0.1:0"
	if r.Host == "" {
		r.Host = r.URL.Host // what a server reads from the Host header, and signatures cover
	}
	rec := httptest.NewRecorder()
	t.h.ServeHTTP(rec, r)
	return rec.Result(), nil
}
