# anysqs container image for Docker users: the static binary on an empty (scratch) base,
# running as uid 65532. `make image` builds the same layout with buildah from a local
# binary and pulls nothing (scripts/image.sh); this file pulls golang to build in.
#
#   docker build -t anysqs --build-arg VERSION=$(git describe --tags --always) \
#       --build-arg COMMIT=$(git rev-parse --short=12 HEAD) .
#   docker run -p 127.0.0.1:9324:9324 -p 127.0.0.1:9325:9325 -v anysqs-data:/data \
#       -e ANYSQS_AUTH_CREDENTIALS=KEY:secret anysqs
#
# The default configuration (deploy/container/anysqs.yaml) is the embedded SQLite backend
# with its data in the volume /data, SQS on 9324 and the admin listener on 9325; on every
# interface it refuses to start without access keys. Mount another file over
# /etc/anysqs/anysqs.yaml, or set ANYSQS_* variables (docs/configuration.md lists them).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
# /out/root and /out/owned are copied over the empty image's /: scratch has no shell to
# mkdir or chown with. The CA bundle lets the binary reach HTTPS backends.
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
        -o /out/root/usr/local/bin/anysqs ./cmd/anysqs && \
    mkdir -p /out/root/etc/ssl/certs /out/root/etc/anysqs /out/root/tmp /out/owned/data && \
    cp /etc/ssl/certs/ca-certificates.crt /out/root/etc/ssl/certs/ && \
    cp deploy/container/anysqs.yaml /out/root/etc/anysqs/ && \
    chmod 1777 /out/root/tmp && chmod 0750 /out/owned/data

FROM scratch
COPY --from=build /out/root/ /
# 65532 is the user the gateway runs as (no /etc/passwd needed); /data must be its to write.
COPY --from=build --chown=65532:65532 /out/owned/ /
USER 65532:65532
WORKDIR /data
VOLUME /data
EXPOSE 9324 9325
ARG VERSION=dev
ARG COMMIT=unknown
LABEL org.opencontainers.image.title=anysqs \
      org.opencontainers.image.source=https://github.com/anysqs/anysqs \
      org.opencontainers.image.version=${VERSION} \
      org.opencontainers.image.revision=${COMMIT}
ENTRYPOINT ["/usr/local/bin/anysqs"]
CMD ["serve", "--config", "/etc/anysqs/anysqs.yaml"]
