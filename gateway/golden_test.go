package gateway_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite the golden response files under testdata/golden")

// goldenCase is one recorded request. The request files were produced by botocore's own
// serializers (1.26 for Query, as /usr/bin/aws and Debian's boto3 send it; 1.43 for AWS
// JSON 1.0), so they have exactly the shapes real SDKs send. "{{handle}}" and
// "{{handle2}}" stand for the receipt handles of the last ReceiveMessage.
type goldenCase struct {
	Action string `json:"action"`
	Body   string `json:"body"`
}

var (
	uuidRE    = regexp.MustCompile(`[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}`)
	handleXML = regexp.MustCompile(`<ReceiptHandle>[^<]*</ReceiptHandle>`)
	handleJS  = regexp.MustCompile(`"ReceiptHandle":"[^"]*"`)
)

func TestGolden(t *testing.T) {
	for _, proto := range []string{"query", "json"} {
		t.Run(proto, func(t *testing.T) {
			raw, err := os.ReadFile(filepath.Join("testdata", "golden", proto+".requests.json"))
			if err != nil {
				t.Fatal(err)
			}
			var cases []goldenCase
			if err := json.Unmarshal(raw, &cases); err != nil {
				t.Fatal(err)
			}
			e := newEnv(t)
			var out bytes.Buffer
			var handles []string
			for i, c := range cases {
				body := c.Body
				for j, h := range handles {
					ph := "{{handle}}"
					if j > 0 {
						ph = fmt.Sprintf("{{handle%d}}", j+1)
					}
					if proto == "query" {
						ph, h = url.QueryEscape(ph), url.QueryEscape(h)
					}
					body = strings.ReplaceAll(body, ph, h)
				}
				var st int
				var hdr map[string][]string
				var resp string
				if proto == "query" {
					st, hdr, resp = e.queryCall("/", mustParseQuery(t, body))
				} else {
					st, hdr, resp = e.jsonCall(c.Action, body)
				}
				if c.Action == "ReceiveMessage" {
					handles = receiptHandles(proto, resp)
				}
				fmt.Fprintf(&out, "### %02d %s\n> %s\n< %d %s", i, c.Action, c.Body, st, first(hdr, "Content-Type"))
				if q := first(hdr, "X-Amzn-Query-Error"); q != "" {
					fmt.Fprintf(&out, " x-amzn-query-error=%s", q)
				}
				fmt.Fprintf(&out, "\n%s\n\n", normalise(resp))
			}
			path := filepath.Join("testdata", "golden", proto+".responses.txt")
			if *update {
				if err := os.WriteFile(path, out.Bytes(), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(path)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if !bytes.Equal(want, out.Bytes()) {
				t.Errorf("responses differ from %s (rerun with -update and review the diff):\n%s", path, firstDiff(string(want), out.String()))
			}
		})
	}
}

func mustParseQuery(t *testing.T, s string) url.Values {
	v, err := url.ParseQuery(s)
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func first(h map[string][]string, k string) string {
	if v := h[k]; len(v) > 0 {
		return v[0]
	}
	return ""
}

func receiptHandles(proto, resp string) []string {
	var hs []string
	if proto == "query" {
		for _, m := range handleXML.FindAllString(resp, -1) {
			hs = append(hs, strings.TrimSuffix(strings.TrimPrefix(m, "<ReceiptHandle>"), "</ReceiptHandle>"))
		}
		return hs
	}
	for _, m := range handleJS.FindAllString(resp, -1) {
		hs = append(hs, strings.TrimSuffix(strings.TrimPrefix(m, `"ReceiptHandle":"`), `"`))
	}
	return hs
}

func normalise(s string) string {
	s = uuidRE.ReplaceAllString(s, "<uuid>")
	s = handleXML.ReplaceAllString(s, "<ReceiptHandle>*</ReceiptHandle>")
	return handleJS.ReplaceAllString(s, `"ReceiptHandle":"*"`)
}

func firstDiff(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g {
			return fmt.Sprintf("line %d\nwant: %s\ngot:  %s", i+1, w, g)
		}
	}
	return ""
}
