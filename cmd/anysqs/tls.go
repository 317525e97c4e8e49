package main

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"

	"github.com/anysqs/anysqs/internal/config"
	"github.com/anysqs/anysqs/internal/tlsreload"
)

// withTLS serves ln over TLS when t names a certificate; the files are read now (a bad
// pair stops the start) and again whenever they change.
func withTLS(ln net.Listener, t config.TLS, section string, log *slog.Logger) (net.Listener, error) {
	if !t.Enabled() {
		return ln, nil
	}
	cert, err := tlsreload.New(t.CertFile, t.KeyFile, func(err error) {
		log.Error("reloading the TLS certificate failed; serving the previous one", "section", section, "err", err)
	})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", section, err)
	}
	return tls.NewListener(ln, cert.Config()), nil
}

// scheme is the URL scheme of a listener with TLS settings t.
func scheme(t config.TLS) string {
	if t.Enabled() {
		return "https"
	}
	return "http"
}
