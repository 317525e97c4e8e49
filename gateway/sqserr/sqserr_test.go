package sqserr_test

import (
	"encoding/json"
	"os"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/gateway/sqserr"
)

// TestTable checks the properties the wire rendering relies on. The generator already
// rejects duplicates and bad statuses in errors.json; this checks what it wrote.
func TestTable(t *testing.T) {
	if len(sqserr.Specs) != len(sqserr.AllCodes) {
		t.Errorf("Specs has %d rows, AllCodes %d", len(sqserr.Specs), len(sqserr.AllCodes))
	}
	seenQuery := map[string]sqserr.Code{}
	for _, c := range sqserr.AllCodes {
		s, ok := sqserr.Specs[c]
		if !ok {
			t.Errorf("no Spec for %s", c)
			continue
		}
		if s.Code != c {
			t.Errorf("Specs[%s].Code = %s", c, s.Code)
		}
		if prev, dup := seenQuery[s.QueryCode]; dup {
			t.Errorf("query code %s used by %s and %s", s.QueryCode, prev, c)
		}
		seenQuery[s.QueryCode] = c
		if s.Status < 400 || s.Status > 599 {
			t.Errorf("%s: status %d", c, s.Status)
		}
		// SDKs decide whether to retry from the status class and the fault together.
		if s.Sender != (s.Status < 500) {
			t.Errorf("%s: fault %s does not match status %d", c, s.Fault(), s.Status)
		}
		if strings.ContainsAny(string(c)+s.QueryCode, " ;") {
			t.Errorf("%s: code or query code %q cannot travel in x-amzn-query-error", c, s.QueryCode)
		}
	}
}

// TestGeneratedIsCurrent catches an errors.json edited without go generate.
func TestGeneratedIsCurrent(t *testing.T) {
	b, err := os.ReadFile("errors.json")
	if err != nil {
		t.Fatal(err)
	}
	var entries []struct {
		Code      sqserr.Code `json:"code"`
		QueryCode string      `json:"query_code"`
		Status    int         `json:"status"`
		Sender    bool        `json:"sender"`
	}
	if err := json.Unmarshal(b, &entries); err != nil {
		t.Fatal(err)
	}
	if len(entries) != len(sqserr.AllCodes) {
		t.Errorf("errors.json has %d entries, AllCodes %d: run go generate", len(entries), len(sqserr.AllCodes))
	}
	for _, e := range entries {
		want := sqserr.Spec{Code: e.Code, QueryCode: e.QueryCode, Status: e.Status, Sender: e.Sender}
		if got := sqserr.Specs[e.Code]; got != want {
			t.Errorf("Specs[%s] = %+v, errors.json says %+v: run go generate", e.Code, got, want)
		}
	}
}

func TestModelValues(t *testing.T) {
	// Spot checks against the SQS Smithy model, where typed SDK errors depend on them.
	cases := []struct {
		c     sqserr.Code
		query string
		code  int
	}{
		{sqserr.QueueDoesNotExist, "AWS.SimpleQueueService.NonExistentQueue", 400},
		{sqserr.QueueNameExists, "QueueAlreadyExists", 400},
		{sqserr.PurgeQueueInProgress, "AWS.SimpleQueueService.PurgeQueueInProgress", 403},
		{sqserr.ReceiptHandleIsInvalid, "ReceiptHandleIsInvalid", 404},
		{sqserr.OverLimit, "OverLimit", 403},
		{sqserr.RequestThrottled, "RequestThrottled", 403},
		{sqserr.ServiceUnavailable, "ServiceUnavailable", 503},
	}
	for _, tc := range cases {
		s := sqserr.SpecOf(tc.c)
		if s.QueryCode != tc.query || s.Status != tc.code {
			t.Errorf("%s: got %s/%d, want %s/%d", tc.c, s.QueryCode, s.Status, tc.query, tc.code)
		}
	}
	if sqserr.SpecOf("NoSuchCode").Code != sqserr.InternalError {
		t.Error("unknown code must render as InternalError")
	}
}
