package conformance_test

import (
	"os"
	"testing"

	"github.com/anysqs/anysqs/capabilities"
	"github.com/anysqs/anysqs/drivers"
)

// conformanceEndpoint is the SQS endpoint the endpoint row judges, black box: AWS SQS
// itself or any server speaking its protocol. Credentials come from the standard AWS
// environment variables.
func conformanceEndpoint() string { return os.Getenv("ANYSQS_CONFORMANCE_ENDPOINT") }

// prepareEndpoint gives each case the shared endpoint; queue names carry the case's
// prefix, so cases do not see each other's queues.
func prepareEndpoint(t *testing.T) storage {
	if conformanceEndpoint() == "" {
		skipUnavailable(t, "no SQS endpoint (set ANYSQS_CONFORMANCE_ENDPOINT)")
	}
	return storage{endpoint: conformanceEndpoint()}
}

// endpointDescription is what the suite expects of an endpoint it knows nothing about:
// the catalog's native behaviour, on the service's clock, with receipts valid anywhere.
func endpointDescription() drivers.Description {
	d := drivers.Description{Name: "endpoint", Clock: drivers.ClockService,
		ReceiptScope: drivers.ReceiptStorage, SharedStorage: true, Activity: drivers.ActivityPoll}
	for _, e := range capabilities.All() {
		d.Capabilities = append(d.Capabilities, capabilities.Declaration{ID: e.ID, Level: capabilities.Native})
	}
	return d
}

// endpointAccount is the account in the endpoint's queue URLs and ARNs.
func endpointAccount() string {
	if a := os.Getenv("ANYSQS_CONFORMANCE_ACCOUNT"); a != "" {
		return a
	}
	return testAccount
}
