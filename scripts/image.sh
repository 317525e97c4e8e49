#!/usr/bin/env bash
# Builds the anysqs OCI image with buildah from scratch: no base image, nothing fetched from a
# registry. The image holds the static binary, the build host's CA bundle (for HTTPS
# backends), deploy/container/anysqs.yaml as /etc/anysqs/anysqs.yaml and an empty /data
# owned by the non-root user 65532 that runs it. The Dockerfile builds the same layout.
#
#   scripts/image.sh BINARY [IMAGE]     (make image: BINARY is bin/image/anysqs)
#
# VERSION and COMMIT label the image; IMAGE defaults to localhost/anysqs:latest.
set -euo pipefail
bin=${1:?usage: scripts/image.sh BINARY [IMAGE]}
image=${2:-localhost/anysqs:latest}
root=$(cd "$(dirname "$0")/.." && pwd)
certs=${CA_CERTIFICATES:-/etc/ssl/certs/ca-certificates.crt}

command -v buildah >/dev/null || { echo "image: needs buildah (apt-get install buildah)" >&2; exit 1; }
[ -f "$certs" ] || { echo "image: no CA bundle at $certs (apt-get install ca-certificates, or set CA_CERTIFICATES)" >&2; exit 1; }
if ! file -b "$bin" | grep -q 'statically linked'; then
	echo "image: $bin is not a static binary (build it with CGO_ENABLED=0)" >&2
	exit 1
fi

# A scratch image has no shell to mkdir or chown with: the directories come from here.
tree=$(mktemp -d)
ctr=
cleanup() {
	rm -rf "$tree"
	if [ -n "$ctr" ]; then buildah rm "$ctr" >/dev/null; fi
}
trap cleanup EXIT
mkdir -p "$tree/root/tmp" "$tree/owned/data"
chmod 1777 "$tree/root/tmp"
chmod 0750 "$tree/owned/data"

ctr=$(buildah from scratch)
buildah copy --quiet "$ctr" "$bin" /usr/local/bin/anysqs
buildah copy --quiet "$ctr" "$certs" /etc/ssl/certs/ca-certificates.crt
buildah copy --quiet "$ctr" "$root/deploy/container/anysqs.yaml" /etc/anysqs/anysqs.yaml
buildah copy --quiet "$ctr" "$tree/root" /
buildah copy --quiet --chown 65532:65532 "$ctr" "$tree/owned" /
buildah config \
	--env PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
	--user 65532:65532 \
	--workingdir /data \
	--volume /data \
	--port 9324/tcp --port 9325/tcp \
	--entrypoint '["/usr/local/bin/anysqs"]' \
	--cmd 'serve --config /etc/anysqs/anysqs.yaml' \
	--label org.opencontainers.image.title=anysqs \
	--label org.opencontainers.image.source=https://github.com/anysqs/anysqs \
	--label "org.opencontainers.image.version=${VERSION:-dev}" \
	--label "org.opencontainers.image.revision=${COMMIT:-unknown}" \
	"$ctr"
buildah commit --quiet --format oci --rm "$ctr" "$image" >/dev/null
ctr=
echo "image: $image, $(buildah images --format '{{.Size}}' "$image" | head -1)"
