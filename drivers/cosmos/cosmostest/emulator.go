// Package cosmostest helps tests run the cosmos driver against local emulators.
package cosmostest

import (
	"bytes"
	"crypto/tls"
	"encoding/json"
	"io"
	"net/http"
	"strconv"
)

// EmulatorTransport is an HTTP transport for @vercel/cosmosdb-server: it accepts the
// emulator's self-signed certificate and copies a transactional batch's partition key
// header into each operation, where that emulator looks for it (the service takes it
// from the header). Nothing else in a request changes.
func EmulatorTransport() *http.Client {
	base := &http.Transport{TLSClientConfig: &tls.Config{InsecureSkipVerify: true}} // local emulator only
	return &http.Client{Transport: roundTripper(func(r *http.Request) (*http.Response, error) {
		if r.Header.Get("x-ms-cosmos-is-batch-request") == "True" && r.Body != nil {
			if err := addPartitionKeys(r); err != nil {
				return nil, err
			}
		}
		return base.RoundTrip(r)
	})}
}

type roundTripper func(*http.Request) (*http.Response, error)

func (f roundTripper) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func addPartitionKeys(r *http.Request) error {
	body, err := io.ReadAll(r.Body)
	if err != nil {
		return err
	}
	_ = r.Body.Close()
	var ops []map[string]any
	if err := json.Unmarshal(body, &ops); err == nil {
		pk := r.Header.Get("x-ms-documentdb-partitionkey")
		for _, op := range ops {
			if _, ok := op["partitionKey"]; !ok {
				op["partitionKey"] = pk
			}
		}
		if b, err := json.Marshal(ops); err == nil {
			body = b
		}
	}
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	r.Header.Set("Content-Length", strconv.Itoa(len(body)))
	r.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
	return nil
}
