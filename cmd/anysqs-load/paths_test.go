package main

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
)

// TestGatewayPathTimesHTTP: calls made with withHTTPTimes record their HTTP exchange
// beside the call; calls without it (warm-up) record nothing.
func TestGatewayPathTimesHTTP(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var in struct{ MessageBody string }
		if err := json.NewDecoder(r.Body).Decode(&in); err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		sum := md5.Sum([]byte(in.MessageBody))
		w.Header().Set("Content-Type", "application/x-amz-json-1.0")
		_ = json.NewEncoder(w).Encode(map[string]string{"MessageId": "m", "MD5OfMessageBody": hex.EncodeToString(sum[:])})
	}))
	defer srv.Close()
	p := newGatewayPath(srv.URL, 1)
	rec := newRecorder()
	ctx := context.Background()
	if err := p.Send(ctx, srv.URL+"/000000000000/q", []string{"unmeasured"}, nil); err != nil {
		t.Fatal(err)
	}
	if n := rec.dist("send http").n; n != 0 {
		t.Fatalf("%d exchanges recorded without a recorder in the context", n)
	}
	for i := 0; i < 3; i++ {
		if err := p.Send(withHTTPTimes(ctx, rec), srv.URL+"/000000000000/q", []string{"body"}, nil); err != nil {
			t.Fatal(err)
		}
	}
	if d := rec.dist("send http"); d.n != 3 || d.p99 <= 0 {
		t.Fatalf("send http = %+v, want 3 exchanges", d)
	}
	if n, first := rec.errors(); n != 0 {
		t.Fatalf("%d errors recorded, first %s", n, first)
	}
}
