#!/bin/sh
# Generates driver.pb.go and driver_grpc.pb.go from driver.proto (go generate runs it).
# protoc-gen-go and protoc-gen-go-grpc are pinned as go.mod tools; protoc is Debian's
# protobuf-compiler (scripts/test-env.sh installs it). The protoc version line the
# plugins write into the headers is normalised, so another protoc release, which emits
# the same code for this file, leaves the generated files unchanged.
set -eu
if ! command -v protoc >/dev/null; then
	echo "driverpb: protoc not found: install protobuf-compiler (apt-get install protobuf-compiler), or run scripts/test-env.sh" >&2
	exit 1
fi
go_plugin=$(go tool -n protoc-gen-go)
grpc_plugin=$(go tool -n protoc-gen-go-grpc)
protoc --plugin=protoc-gen-go="$go_plugin" --plugin=protoc-gen-go-grpc="$grpc_plugin" \
	--go_out=. --go_opt=paths=source_relative \
	--go-grpc_out=. --go-grpc_opt=paths=source_relative \
	driver.proto
for f in driver.pb.go driver_grpc.pb.go; do
	sed -e "s|^//\([[:space:]]*-\{0,1\}[[:space:]]*protoc[[:space:]][[:space:]]*\)v[0-9.]*\$|//\1(version normalised by generate.sh)|" "$f" >"$f.tmp"
	mv "$f.tmp" "$f"
done
