package main

import (
	"bufio"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestSlowAndGreedyClients: a client that trickles its headers or its body is cut off
// when the listener's read timeouts pass, and a header flood is refused with 431; the
// server keeps serving others.
func TestSlowAndGreedyClients(t *testing.T) {
	saved := []time.Duration{readHeaderTimeout, readTimeout}
	readHeaderTimeout, readTimeout = 200*time.Millisecond, 400*time.Millisecond
	t.Cleanup(func() { readHeaderTimeout, readTimeout = saved[0], saved[1] })

	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if _, err := io.ReadAll(r.Body); err != nil {
			w.WriteHeader(http.StatusRequestTimeout) // the read timeout cut the body off
			return
		}
		w.WriteHeader(http.StatusOK)
	})
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := newHTTPServer(h)
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	// cutOff writes the start of a request, then nothing, and waits for the server to
	// close the connection: the event the timeout causes.
	cutOff := func(what, partial string) {
		t.Helper()
		c, err := net.Dial("tcp", ln.Addr().String())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Close()
		if _, err := io.WriteString(c, partial); err != nil {
			t.Fatal(err)
		}
		_ = c.SetReadDeadline(time.Now().Add(time.Minute)) // a hang guard, not a timing assertion
		rest, err := io.ReadAll(c)
		if ne, ok := err.(net.Error); ok && ne.Timeout() {
			t.Fatalf("%s: the server kept the connection open", what)
		}
		if strings.HasPrefix(string(rest), "HTTP/1.1 200") {
			t.Fatalf("%s: answered 200: %q", what, rest)
		}
	}
	cutOff("trickled headers", "POST / HTTP/1.1\r\nHost: gw\r\nX-Amz-Target: AmazonSQS.ListQueues\r\n")
	cutOff("trickled body", "POST / HTTP/1.1\r\nHost: gw\r\nContent-Length: 1000\r\n\r\n{\"QueueName\"")

	c, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	flood := "POST / HTTP/1.1\r\nHost: gw\r\n" + strings.Repeat("X-Flood: "+strings.Repeat("a", 1000)+"\r\n", 100) + "\r\n"
	if _, err := io.WriteString(c, flood); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(c), nil)
	if err != nil || resp.StatusCode != http.StatusRequestHeaderFieldsTooLarge {
		t.Fatalf("100 KB of headers: %v %v, want 431", resp, err)
	}

	resp, err = http.Post("http://"+ln.Addr().String()+"/", "application/x-amz-json-1.0", strings.NewReader("{}"))
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("a well-behaved client after the others: %v %v", resp, err)
	}
	resp.Body.Close()
}
