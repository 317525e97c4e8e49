# anysqs container image: a static binary on a distroless base, running as non-root.
#
#   docker build -t anysqs --build-arg VERSION=$(git describe --tags --always) \
#       --build-arg COMMIT=$(git rev-parse --short=12 HEAD) .
#   docker run -p 9324:9324 -p 9325:9325 -v anysqs-data:/var/lib/anysqs anysqs
#
# The default configuration (deploy/container/anysqs.yaml) is the embedded SQLite backend
# with its data in /var/lib/anysqs; mount another over /etc/anysqs/anysqs.yaml, or set
# ANYSQS_* variables (README.md lists them).
FROM golang:1.26-bookworm AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
ARG COMMIT=unknown
RUN CGO_ENABLED=0 go build -trimpath -ldflags "-s -w -X main.version=${VERSION} -X main.commit=${COMMIT}" \
        -o /out/anysqs ./cmd/anysqs && \
    mkdir -p /out/data

FROM gcr.io/distroless/static-debian12:nonroot
COPY --from=build /out/anysqs /usr/local/bin/anysqs
COPY deploy/container/anysqs.yaml /etc/anysqs/anysqs.yaml
# 65532 is distroless's nonroot user; the data directory must be its to write.
COPY --from=build --chown=65532:65532 /out/data /var/lib/anysqs
USER 65532:65532
VOLUME /var/lib/anysqs
EXPOSE 9324 9325
ENTRYPOINT ["/usr/local/bin/anysqs"]
CMD ["serve", "--config", "/etc/anysqs/anysqs.yaml"]
