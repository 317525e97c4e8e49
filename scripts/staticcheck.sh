#!/usr/bin/env bash
# Runs staticcheck at the pinned version, installing it from the Go module proxy if needed.
set -euo pipefail
version=v0.8.2
bin="$(go env GOPATH)/bin/staticcheck"
if ! { [ -x "$bin" ] && "$bin" -version 2>/dev/null | grep -q "${version#v}"; }; then
	GOFLAGS=-mod=mod go install "honnef.co/go/tools/cmd/staticcheck@$version"
fi
exec "$bin" "$@"
