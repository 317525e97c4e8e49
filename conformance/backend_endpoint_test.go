package conformance

import (
	"cmp"
	"net/url"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/anysqs/anysqs/capabilities/report"
	"github.com/anysqs/anysqs/internal/testenv"
)

// conformanceEndpoint is the SQS endpoint the endpoint row judges, black box: AWS SQS
// itself or any server speaking its protocol. Credentials come from the standard AWS
// environment variables.
func conformanceEndpoint() string { return os.Getenv("ANYSQS_CONFORMANCE_ENDPOINT") }

// endpointRow is the table's row for the endpoint: the reference run, aws-sqs, when the
// endpoint is AWS SQS (or reference is "aws", to exercise that flow without AWS), else
// "endpoint". Its cases then confirm the expectations every backend report states.
func endpointRow(endpoint, reference string) backend {
	b := backend{name: "endpoint", prepare: prepareEndpoint, parallel: true, timeout: 10 * time.Minute,
		hidden: endpoint == "", target: func(string) string { return "the SQS endpoint " + endpoint }}
	u, err := url.Parse(endpoint)
	host := endpoint
	if err == nil && u.Host != "" {
		host = u.Host
	}
	if reference == "aws" || (err == nil && strings.HasSuffix(u.Hostname(), ".amazonaws.com")) {
		b.name, b.reference = report.ReferenceBackend, true
		b.target = func(string) string { return "AWS SQS " + host }
	}
	return b
}

// prepareEndpoint gives each case the shared endpoint; queue names carry the case's
// prefix, so cases do not see each other's queues.
func prepareEndpoint(t *testing.T) storage {
	if conformanceEndpoint() == "" {
		testenv.Unavailable(t, "no SQS endpoint (set ANYSQS_CONFORMANCE_ENDPOINT)")
	}
	return storage{endpoint: conformanceEndpoint(), account: endpointAccount(), region: cmp.Or(os.Getenv("AWS_REGION"), testRegion), client: envCredentials}
}

// endpointAccount is the account in the endpoint's queue URLs and ARNs.
func endpointAccount() string {
	if a := os.Getenv("ANYSQS_CONFORMANCE_ACCOUNT"); a != "" {
		return a
	}
	return testAccount
}

func TestEndpointRow(t *testing.T) {
	for _, tt := range []struct {
		endpoint, reference, name, target string
	}{
		{"https://sqs.eu-west-1.amazonaws.com", "", "aws-sqs", "AWS SQS sqs.eu-west-1.amazonaws.com"},
		{"http://127.0.0.1:19324", "aws", "aws-sqs", "AWS SQS 127.0.0.1:19324"},
		{"http://localhost:4566", "", "endpoint", "the SQS endpoint http://localhost:4566"},
		{"https://amazonaws.com.example.org", "", "endpoint", "the SQS endpoint https://amazonaws.com.example.org"},
	} {
		b := endpointRow(tt.endpoint, tt.reference)
		if b.name != tt.name || b.reference != (tt.name == "aws-sqs") || b.target("") != tt.target || b.hidden {
			t.Errorf("endpointRow(%q, %q) = %s, reference %v, target %q; want %s, target %q",
				tt.endpoint, tt.reference, b.name, b.reference, b.target(""), tt.name, tt.target)
		}
	}
	if !endpointRow("", "aws").hidden {
		t.Error("without an endpoint the row must be hidden")
	}
}
