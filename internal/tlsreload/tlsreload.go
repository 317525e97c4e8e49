// Package tlsreload serves a TLS certificate from PEM files that may be replaced while
// the process runs (a renewed certificate, a rotated Secret).
//
// Semantics: the files are read at New, which fails on a missing or mismatched pair, and
// again at the next handshake after either file's modification time or size changes. A
// pair that fails to load then (a half-written file, a key that does not match yet) is
// logged through the error callback and the previous certificate stays in use, so a
// rotation in progress never takes the listener down. Each handshake costs two stat
// calls.
//
// Configuration: cert_file and key_file in the gateway's tls and admin_tls sections.
package tlsreload

import (
	"crypto/tls"
	"fmt"
	"os"
	"sync"
	"time"
)

// Certificate is a certificate read from files and re-read when they change.
type Certificate struct {
	certFile, keyFile string
	onError           func(error)

	mu      sync.Mutex
	cert    *tls.Certificate
	certVer version
	keyVer  version
}

type version struct {
	mod  time.Time
	size int64
}

// New reads the pair; onError (nil: ignore) hears of later failed reloads.
func New(certFile, keyFile string, onError func(error)) (*Certificate, error) {
	c := &Certificate{certFile: certFile, keyFile: keyFile, onError: onError}
	if err := c.load(); err != nil {
		return nil, err
	}
	return c, nil
}

// Config is a server TLS configuration serving c (TLS 1.2 at least).
func (c *Certificate) Config() *tls.Config {
	return &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: c.GetCertificate}
}

// GetCertificate is tls.Config.GetCertificate: the current certificate, re-read first
// if its files changed.
func (c *Certificate) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	cv, kv, err := stat(c.certFile, c.keyFile)
	if err == nil && (cv != c.certVer || kv != c.keyVer) {
		err = c.loadLocked()
		// A pair that failed is not tried again until a file changes once more.
		c.certVer, c.keyVer = cv, kv
	}
	if err != nil && c.onError != nil {
		c.onError(err)
	}
	return c.cert, nil
}

func (c *Certificate) load() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.loadLocked()
}

func (c *Certificate) loadLocked() error {
	cv, kv, err := stat(c.certFile, c.keyFile)
	if err != nil {
		return err
	}
	cert, err := tls.LoadX509KeyPair(c.certFile, c.keyFile)
	if err != nil {
		return fmt.Errorf("tls: %s and %s: %w", c.certFile, c.keyFile, err)
	}
	c.cert, c.certVer, c.keyVer = &cert, cv, kv
	return nil
}

func stat(certFile, keyFile string) (version, version, error) {
	ci, err := os.Stat(certFile)
	if err != nil {
		return version{}, version{}, fmt.Errorf("tls: %w", err)
	}
	ki, err := os.Stat(keyFile)
	if err != nil {
		return version{}, version{}, fmt.Errorf("tls: %w", err)
	}
	return version{ci.ModTime(), ci.Size()}, version{ki.ModTime(), ki.Size()}, nil
}
