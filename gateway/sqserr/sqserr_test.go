package sqserr_test

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"

	"github.com/anysqs/anysqs/gateway/sqserr"
)

// TestTableComplete parses sqserr.go so that a Code constant added without a Specs row or
// an AllCodes entry fails here rather than rendering as InternalError.
func TestTableComplete(t *testing.T) {
	f, err := parser.ParseFile(token.NewFileSet(), "sqserr.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	var consts []string
	for _, d := range f.Decls {
		g, ok := d.(*ast.GenDecl)
		if !ok || g.Tok != token.CONST {
			continue
		}
		for _, s := range g.Specs {
			for _, n := range s.(*ast.ValueSpec).Names {
				consts = append(consts, n.Name)
			}
		}
	}
	if len(consts) != len(sqserr.AllCodes) {
		t.Errorf("%d Code constants, AllCodes has %d", len(consts), len(sqserr.AllCodes))
	}
	if len(sqserr.Specs) != len(sqserr.AllCodes) {
		t.Errorf("Specs has %d rows, AllCodes %d", len(sqserr.Specs), len(sqserr.AllCodes))
	}
	seenCode := map[sqserr.Code]bool{}
	seenQuery := map[string]sqserr.Code{}
	for _, c := range sqserr.AllCodes {
		if seenCode[c] {
			t.Errorf("AllCodes lists %s twice", c)
		}
		seenCode[c] = true
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
		if s.Sender != (s.Status < 500) {
			t.Errorf("%s: fault %s does not match status %d", c, s.Fault(), s.Status)
		}
		if strings.ContainsAny(s.QueryCode, " ;") {
			t.Errorf("%s: query code %q cannot travel in x-amzn-query-error", c, s.QueryCode)
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
