package wire

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestCheckJSONText: repeated member names (in any object, escaped or not; in any case
// but in a map member, whose keys are case-sensitive) and lone surrogate escapes are
// refused; everything else valid passes.
func TestCheckJSONText(t *testing.T) {
	for _, c := range []struct {
		body string
		ok   bool
	}{
		{`{"QueueUrl":"q","MessageBody":"x"}`, true},
		{`{"MessageBody":"\ud83d\ude00 \u00e9 \\ud800 \\\\"}`, true}, // a pair; an escaped backslash before "ud800"
		{`{"a":{"k":1},"b":{"k":2}}`, true},                          // the same name in two objects
		{`{"Entries":[{"Id":"1"},{"Id":"2"}]}`, true},
		{`{"MessageBody":"\"QueueUrl\":\"x\"","QueueUrl":"q"}`, true}, // a name inside a string value
		{`  { "a" : 1 , "b" : 2 }  `, true},
		{`{"a":1,"a":2}`, false},
		{`{"QueueUrl":"q","queueurl":"r"}`, false},
		{`{"QueueUrl":"q","\u0051ueueUrl":"r"}`, false},
		{`{"x":{"y":[{"k":1,"k":2}]}}`, false},
		// Map members' keys are case-sensitive: two tags, two attributes; the same key twice
		// is still a repeat, and a map's values (structures) still compare in any case.
		{`{"Tags":{"mytag":"a","MyTag":"b"}}`, true},
		{`{"tags":{"mytag":"a","MyTag":"b"}}`, true},
		{`{"MessageAttributes":{"k":{"DataType":"String","StringValue":"1"},"K":{"DataType":"String","StringValue":"2"}}}`, true},
		{`{"Entries":[{"MessageAttributes":{"k":{"DataType":"String"},"K":{"DataType":"String"}}}]}`, true},
		{`{"Attributes":{"Policy":"x","policy":"y"}}`, true},
		{`{"Tags":{"mytag":"a","mytag":"b"}}`, false},
		{`{"Tags":{"a":"1"},"tags":{"b":"2"}}`, false},
		{`{"MessageAttributes":{"k":{"DataType":"String","datatype":"Number"}}}`, false},
		{`{"MessageAttributes":{"Tags":{"DataType":"String","datatype":"Number"}}}`, false},
		{`{"x":{"Tags":{"Q":1,"q":2}},"QueueUrl":"q","queueurl":"r"}`, false},
		{`{"MessageBody":"\ud800"}`, false},
		{`{"MessageBody":"\udc00x"}`, false},
		{`{"MessageBody":"\ud800\u0041"}`, false},
		{`{"MessageBody":"end \ud83d"}`, false},
	} {
		if err := CheckJSONText([]byte(c.body)); (err == nil) != c.ok {
			t.Errorf("%s: %v, want ok=%v", c.body, err, c.ok)
		}
	}
	many := `{`
	for i := 0; i < 40; i++ {
		many += `"k` + string(rune('a'+i%26)) + string(rune('a'+i/26)) + `":1,`
	}
	if err := CheckJSONText([]byte(many + `"kaa":2}`)); err == nil {
		t.Error("a name repeated after 40 others was not found")
	}
	if err := CheckJSONText([]byte(many + `"zz":2}`)); err != nil {
		t.Errorf("41 distinct names: %v", err)
	}
	tags := `{"Tags":{` + strings.TrimPrefix(many, "{")
	if err := CheckJSONText([]byte(tags + `"KAA":2}}`)); err != nil {
		t.Errorf("a tag key after 40 others that differs in case only: %v", err)
	}
	if err := CheckJSONText([]byte(tags + `"kaa":2}}`)); err == nil {
		t.Error("a tag key repeated after 40 others was not found")
	}
}

// BenchmarkCheckJSONText measures the scan on a SendMessageBatch of ten 100-byte
// messages with two attributes each, next to decoding the same body.
func BenchmarkCheckJSONText(b *testing.B) {
	body := `{"QueueUrl":"http://h/000000000000/q","Entries":[`
	for i := 0; i < 10; i++ {
		if i > 0 {
			body += ","
		}
		body += `{"Id":"e` + string(rune('0'+i)) + `","MessageBody":"` + strings.Repeat("x", 100) +
			`","MessageAttributes":{"a":{"DataType":"String","StringValue":"1"},"b":{"DataType":"Number","StringValue":"2"}}}`
	}
	body += `]}`
	raw := []byte(body)
	b.Run("scan", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			if !utf8.Valid(raw) || CheckJSONText(raw) != nil {
				b.Fatal("refused")
			}
		}
	})
	b.Run("decode", func(b *testing.B) {
		b.SetBytes(int64(len(raw)))
		for b.Loop() {
			var in struct {
				QueueURL string `json:"QueueUrl"`
				Entries  []struct {
					ID                string `json:"Id"`
					MessageBody       string
					MessageAttributes map[string]struct{ DataType, StringValue string }
				}
			}
			if err := json.Unmarshal(raw, &in); err != nil {
				b.Fatal(err)
			}
		}
	})
}
