package postgres

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"math/big"
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestWithTLS(t *testing.T) {
	tls := &TLSOptions{Mode: "verify-full", CAFile: "/ca it's.pem"}
	for _, c := range []struct{ dsn, want string }{
		{"postgres://u@h:5432/db?sslmode=disable", "postgres://u@h:5432/db?sslmode=verify-full&sslrootcert=%2Fca+it%27s.pem"},
		{"host=h dbname=db", `host=h dbname=db sslmode='verify-full' sslrootcert='/ca it\'s.pem'`},
	} {
		got, err := withTLS(c.dsn, tls)
		if err != nil || got != c.want {
			t.Errorf("withTLS(%q) = %q, %v; want %q", c.dsn, got, err, c.want)
		}
	}
}

func TestPoolConfigTLS(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca it's.pem")
	writeCA(t, ca)
	cfg, err := poolConfig(Options{DSN: "host=h dbname=db", Schema: "s", TLS: &TLSOptions{Mode: "verify-full", CAFile: ca}})
	if err != nil {
		t.Fatal(err)
	}
	if c := cfg.ConnConfig.TLSConfig; c == nil || c.ServerName != "h" || c.RootCAs == nil {
		t.Fatalf("TLS config not applied: %+v", c)
	}
}

func writeCA(t *testing.T, path string) {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour), IsCA: true,
		BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600); err != nil {
		t.Fatal(err)
	}
}
