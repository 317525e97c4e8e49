package firestore

import "testing"

// TestHandleFormatStable: a handle issued under a key opens to what it names, and the
// same receipt under the same key gives the same handle, so handles issued before an
// upgrade (the key is kept in <p>_meta) still open after it.
func TestHandleFormatStable(t *testing.T) {
	d := &Driver{secret: []byte("0123456789abcdef0123456789abcdef")}
	r := receipt{qid: "q-1", mi: "mi-2", doc: "doc-3", gen: 42}
	const golden = "AQNxLTEEbWktMgVkb2MtMwAAAAAAAAAqAad4m1m-5wxCzQ8YtZBzgg"
	if got := d.encodeHandle(r); got != golden {
		t.Fatalf("encodeHandle = %q, want %q", got, golden)
	}
	if got, ok := d.decodeHandle(golden); !ok || got != r {
		t.Fatalf("decodeHandle(golden) = %+v, %v; want %+v", got, ok, r)
	}
	other := &Driver{secret: []byte("another key of thirty-two bytes!")}
	if _, ok := other.decodeHandle(golden); ok {
		t.Fatal("a handle opened under another key")
	}
	b := []byte(golden)
	b[5] ^= 1
	if _, ok := d.decodeHandle(string(b)); ok {
		t.Fatal("an altered handle opened")
	}
}
