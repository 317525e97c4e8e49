package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"math/big"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/sqs"
)

// testCA is a certificate authority made for one test, and a server certificate it
// signed for 127.0.0.1.
type testCA struct {
	pool             *x509.CertPool
	certPEM, keyPEM  []byte
	serverCommonName string
}

func newTestCA(t *testing.T, name string) testCA {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: name + " CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	caCert, _ := x509.ParseCertificate(caDER)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: name + " server"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{net.ParseIP("127.0.0.1")},
		KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, caCert, &key.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	keyDER, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(caCert)
	return testCA{pool: pool, serverCommonName: name + " server",
		certPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
		keyPEM:  pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER})}
}

// install writes the CA's server certificate and key over the files, with a later
// modification time than any before.
func (ca testCA) install(t *testing.T, certFile, keyFile string, at time.Time) {
	t.Helper()
	for f, b := range map[string][]byte{certFile: ca.certPEM, keyFile: ca.keyPEM} {
		if err := os.WriteFile(f, b, 0o600); err != nil {
			t.Fatal(err)
		}
		if err := os.Chtimes(f, at, at); err != nil {
			t.Fatal(err)
		}
	}
}

func verifyingClient(pool *x509.CertPool) *http.Client {
	return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}}}
}

// TestServeTLS: with tls and admin_tls set, both listeners speak HTTPS; aws-sdk-go-v2,
// verifying the certificate against the test's CA, creates a queue (whose URL is https)
// and sends and receives through it; a client that does not trust the CA is refused.
// After the files are replaced by a pair from another CA, the next connections get the
// new certificate without a restart.
func TestServeTLS(t *testing.T) {
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
	first := newTestCA(t, "first")
	first.install(t, certFile, keyFile, time.Now().Add(-time.Hour))
	addr, adminAddr := serveT(t, dir, "listen: 127.0.0.1:0\nadmin_listen: 127.0.0.1:0\nbackend:\n  name: sqlite\n  options:\n    data_dir: \":memory:\"\n"+
		"tls:\n  cert_file: tls.crt\n  key_file: tls.key\nadmin_tls:\n  cert_file: tls.crt\n  key_file: tls.key\n")
	ctx := context.Background()

	client := func(pool *x509.CertPool) *sqs.Client {
		return sqs.New(sqs.Options{Region: "us-east-1", BaseEndpoint: aws.String("https://" + addr),
			Credentials: credentials.NewStaticCredentialsProvider("AKID", "secret", ""),
			HTTPClient:  verifyingClient(pool), Retryer: aws.NopRetryer{}})
	}
	c := client(first.pool)
	out, err := c.CreateQueue(ctx, &sqs.CreateQueueInput{QueueName: aws.String("tls")})
	if err != nil {
		t.Fatalf("CreateQueue over TLS: %v", err)
	}
	if !strings.HasPrefix(*out.QueueUrl, "https://") {
		t.Errorf("queue URL over TLS: %s", *out.QueueUrl)
	}
	if _, err := c.SendMessage(ctx, &sqs.SendMessageInput{QueueUrl: out.QueueUrl, MessageBody: aws.String("sealed")}); err != nil {
		t.Fatalf("SendMessage over TLS: %v", err)
	}
	got, err := c.ReceiveMessage(ctx, &sqs.ReceiveMessageInput{QueueUrl: out.QueueUrl})
	if err != nil || len(got.Messages) != 1 || *got.Messages[0].Body != "sealed" {
		t.Fatalf("ReceiveMessage over TLS: %v %+v", err, got)
	}
	resp, err := verifyingClient(first.pool).Get("https://" + adminAddr + "/healthz")
	if err != nil {
		t.Fatalf("admin over TLS: %v", err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("admin /healthz over TLS: %d", resp.StatusCode)
	}

	second := newTestCA(t, "second")
	wantUnknownAuthority := func(err error, what string) {
		t.Helper()
		var ua x509.UnknownAuthorityError
		if !errors.As(err, &ua) {
			t.Errorf("%s: %v, want an unknown-authority error", what, err)
		}
	}
	_, err = client(second.pool).ListQueues(ctx, &sqs.ListQueuesInput{})
	wantUnknownAuthority(err, "a client trusting another CA")

	// Rotation: the second CA's pair replaces the files; no restart.
	second.install(t, certFile, keyFile, time.Now())
	if _, err := client(second.pool).ListQueues(ctx, &sqs.ListQueuesInput{}); err != nil {
		t.Fatalf("after rotation, a client trusting the new CA: %v", err)
	}
	_, err = client(first.pool).ListQueues(ctx, &sqs.ListQueuesInput{})
	wantUnknownAuthority(err, "after rotation, a client trusting the old CA only")
	resp, err = verifyingClient(second.pool).Get("https://" + adminAddr + "/healthz")
	if err != nil {
		t.Fatalf("admin after rotation: %v", err)
	}
	resp.Body.Close()
}
