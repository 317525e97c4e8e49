package cosmos

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	azruntime "github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"

	"github.com/anysqs/anysqs/drivers"
)

// responseError is the error azcosmos returns for a refused request: an
// *azcore.ResponseError whose ErrorCode is the status line, Cosmos's own code and
// message being in the body.
func responseError(status int, body string, hdr ...string) error {
	h := http.Header{"Content-Type": {"application/json"}}
	for i := 0; i+1 < len(hdr); i += 2 {
		h.Set(hdr[i], hdr[i+1])
	}
	u, _ := url.Parse("https://acct.documents.azure.com/dbs/anysqs/colls/queues/docs")
	resp := &http.Response{StatusCode: status, Status: http.StatusText(status), Header: h,
		Body: io.NopCloser(strings.NewReader(body)), Request: &http.Request{Method: http.MethodPost, URL: u}}
	return azruntime.NewResponseErrorWithErrorCode(resp, resp.Status)
}

// TestMapErr: each Cosmos failure maps to its kind, and the driver error keeps what
// Cosmos said, reachable (*azcore.ResponseError, *batchError) and in its text, which the
// gateway logs: the status, Cosmos's code and message, the substatus that the SDK's own
// text leaves out, the activity id of a refused batch.
func TestMapErr(t *testing.T) {
	for _, tc := range []struct {
		name  string
		err   error
		kind  drivers.Kind
		retry time.Duration
		said  []string
	}{
		{"unavailable", responseError(503, `{"code":"ServiceUnavailable","message":"replica quorum lost"}`, "x-ms-substatus", "21008"),
			drivers.KindUnavailable, 0, []string{"FIFO write (substatus 21008)", "RESPONSE 503", "ServiceUnavailable", "replica quorum lost"}},
		{"partition full", responseError(403, `{"code":"Forbidden","message":"Partition key reached maximum size of 20 GB"}`, "x-ms-substatus", "1014"),
			drivers.KindOverLimit, 0, []string{"refused (partition full, or no permission) (substatus 1014)", "RESPONSE 403", "Partition key reached maximum size"}},
		{"throttled", responseError(429, `{"code":"TooManyRequests","message":"Request rate is large"}`, "x-ms-retry-after-ms", "1500", "x-ms-substatus", "3200"),
			drivers.KindThrottled, 1500 * time.Millisecond, []string{"(429) (substatus 3200)", "Request rate is large"}},
		{"bad request", responseError(400, `{"code":"BadRequest","message":"One of the specified inputs is invalid"}`, "x-ms-substatus", "0"),
			drivers.KindInternal, 0, []string{"FIFO write: bad request: POST", "RESPONSE 400", "One of the specified inputs is invalid"}},
		{"not found", responseError(404, `{"code":"NotFound","message":"Resource Not Found"}`),
			drivers.KindInternal, 0, []string{"RESPONSE 404", "Resource Not Found"}},
		{"batch operation too large", &batchError{op: 2, status: 413, body: `{"message":"too large"}`, activity: "5f1e0c2a"},
			drivers.KindOverLimit, 0, []string{"item or partition too large: transactional batch not applied: operation 2 answered 413 Request Entity Too Large: {\"message\":\"too large\"} (activity id 5f1e0c2a)"}},
		{"batch operation unavailable", &batchError{op: 0, status: 503, activity: "5f1e0c2a"},
			drivers.KindUnavailable, 0, []string{"operation 0 answered 503 Service Unavailable (activity id 5f1e0c2a)"}},
		{"batch without a failed operation", &batchError{activity: "5f1e0c2a"},
			drivers.KindUnavailable, 0, []string{"transactional batch not applied; no operation says why (activity id 5f1e0c2a)"}},
		{"batch operation conflict", &batchError{op: 0, status: 412},
			drivers.KindAborted, 0, []string{"concurrent change: transactional batch not applied: operation 0 answered 412"}},
		{"transport", errors.New("dial tcp 10.0.0.4:443: connect: connection refused"),
			drivers.KindUnavailable, 0, []string{"cosmos: SendMessages: FIFO write: dial tcp 10.0.0.4:443: connect: connection refused"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := mapErr(context.Background(), tc.err, "SendMessages: FIFO write")
			var de *drivers.Error
			if !errors.As(err, &de) || de.Kind != tc.kind || de.RetryAfter != tc.retry {
				t.Fatalf("got %#v, want kind %v, retry after %v", err, tc.kind, tc.retry)
			}
			if !errors.Is(err, tc.err) {
				t.Errorf("%v does not reach the Cosmos error", err)
			}
			var re *azcore.ResponseError
			var be *batchError
			if errors.As(tc.err, &re) && (!errors.As(err, &re) || re.StatusCode != statusOf(tc.err)) {
				t.Errorf("the *azcore.ResponseError is not reachable from %v", err)
			}
			if errors.As(tc.err, &be) && !errors.As(err, &be) {
				t.Errorf("the *batchError is not reachable from %v", err)
			}
			if !strings.HasPrefix(de.Message, "cosmos: SendMessages: FIFO write") {
				t.Errorf("message %q, want the driver's summary", de.Message)
			}
			for _, s := range tc.said {
				if !strings.Contains(err.Error(), s) {
					t.Errorf("%q does not say %q", err, s)
				}
			}
		})
	}
}
