package conformance

import (
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/anysqs/anysqs/internal/testenv"
)

// newHarness starts a gateway for backend b on fresh storage, with a JSON-protocol client.
func newHarness(t *testing.T, b backend) *H { return newHarnessWith(t, b, harnessOptions{}) }

// newHarnessWith starts a gateway for backend b on fresh storage, as o says.
func newHarnessWith(t *testing.T, b backend, o harnessOptions) *H {
	t.Helper()
	st := b.prepare(t)
	if st.unavailable == nil {
		st.unavailable = func(_ T, format string, args ...any) { testenv.Unavailable(t, format, args...) }
	}
	return startHarness(t, b.name, st, b.timeout, o)
}

// envCredentials gives an endpoint's clients the standard AWS environment, as any SQS
// client reads it.
func envCredentials(o *sqs.Options) {
	o.Credentials = credentials.NewStaticCredentialsProvider(os.Getenv("AWS_ACCESS_KEY_ID"),
		os.Getenv("AWS_SECRET_ACCESS_KEY"), os.Getenv("AWS_SESSION_TOKEN"))
	if r := os.Getenv("AWS_REGION"); r != "" {
		o.Region = r
	}
}
