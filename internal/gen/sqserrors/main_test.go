package main

import (
	"strings"
	"testing"
)

const good = `{"constant": "QueueDoesNotExist", "code": "QueueDoesNotExist", "query_code": "AWS.SimpleQueueService.NonExistentQueue", "status": 400, "sender": true, "doc": "no such queue."}`

func TestLoad(t *testing.T) {
	cases := []struct {
		name, json, want string // want: a part of the error, "" for none
	}{
		{"good", "[" + good + "]", ""},
		{"empty", "[]", "no entries"},
		{"unknown field", `[{"constant": "A", "colour": "red"}]`, `unknown field "colour"`},
		{"empty fields", `[{"constant": "A", "code": "", "query_code": "A", "status": 400, "doc": " "}]`, "code is empty"},
		{"empty doc", `[{"constant": "A", "code": "A", "query_code": "A", "status": 400, "doc": ""}]`, "doc is empty"},
		{"status", `[{"constant": "A", "code": "A", "query_code": "A", "status": 200, "doc": "d"}]`, "status 200"},
		{"identifier", `[{"constant": "a-b", "code": "A", "query_code": "A", "status": 400, "doc": "d"}]`, "not an exported Go identifier"},
		{"two lines", `[{"constant": "A", "code": "A", "query_code": "A", "status": 400, "doc": "d\ne"}]`, "doc must be one line"},
		{"duplicate constant", "[" + good + "," + strings.Replace(good, `"code": "QueueDoesNotExist"`, `"code": "X"`, 1) + "]", `constant "QueueDoesNotExist" already used by entry 0`},
		{"duplicate code", "[" + good + "," + strings.Replace(good, `"constant": "QueueDoesNotExist"`, `"constant": "X"`, 1) + "]", `code "QueueDoesNotExist" already used by entry 0`},
		{"duplicate query code", `[{"constant": "A", "code": "A", "query_code": "Q", "status": 400, "doc": "d"}, {"constant": "B", "code": "B", "query_code": "Q", "status": 400, "doc": "d"}]`, `query_code "Q" already used by entry 0`},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := load(strings.NewReader(tc.json))
			switch {
			case tc.want == "" && err != nil:
				t.Fatalf("unexpected error: %v", err)
			case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
				t.Fatalf("error %v, want one containing %q", err, tc.want)
			}
		})
	}
}
