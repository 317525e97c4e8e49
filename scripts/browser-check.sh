#!/usr/bin/env bash
# make browser-check: the console and the compatibility page in headless Chromium at 1280 px.
#
# Starts bin/anysqs on a scratch SQLite directory with the console on, dead-letters three
# messages with `anysqs mq`, has scripts/browser/check.mjs click the console's redrive
# button, then checks through the SQS API that the three messages are back in their source
# queue and the DLQ is empty. Saves docs/console-1280.png, docs/console-queue-1280.png (the DLQ's messages, peeked) and docs/compat-page-1280.png
# (of REPORT, default docs/compat/index.html; OUT=DIR writes them elsewhere); the console's matrix
# must equal the sqlite.json beside REPORT.
# Needs Debian's chromium (apt-get install chromium) and npm; not part of make test.
set -euo pipefail
cd "$(dirname "$0")/.."
REPORT=${REPORT:-docs/compat/index.html}
OUT=${OUT:-docs}
command -v chromium >/dev/null || { echo "browser-check: needs Debian's chromium: apt-get install chromium" >&2; exit 1; }
command -v npm >/dev/null || { echo "browser-check: needs node and npm: apt-get install npm" >&2; exit 1; }
[ -f "$REPORT" ] || { echo "browser-check: no report page $REPORT (make report, or REPORT=DIR/index.html)" >&2; exit 1; }
(cd scripts/browser && npm ci --no-audit --no-fund --silent)

tmp=$(mktemp -d)
pid=
cleanup() {
	if [ -n "$pid" ]; then kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null || true; fi
	rm -rf "$tmp"
}
trap cleanup EXIT
go build -ldflags "-X main.version=$(git describe --tags --always --dirty) -X main.commit=$(git rev-parse --short=12 HEAD)" \
	-o "$tmp/anysqs" ./cmd/anysqs
read -r api admin < <(python3 -c 'import socket
s=[socket.socket() for _ in range(2)]
[x.bind(("127.0.0.1",0)) for x in s]
print(*[x.getsockname()[1] for x in s])')
key=AKIABROWSERCHECK secret=browser-check-secret
cat >"$tmp/anysqs.yaml" <<YAML
listen: 127.0.0.1:$api
admin_listen: 127.0.0.1:$admin
console: true
backend: {name: sqlite, options: {data_dir: ./data}}
auth:
  credentials:
    - {access_key_id: $key, secret_access_key: $secret}
YAML
"$tmp/anysqs" serve --config "$tmp/anysqs.yaml" >"$tmp/serve.log" 2>&1 &
pid=$!
for i in $(seq 100); do
	curl -fsS "http://127.0.0.1:$admin/readyz" >/dev/null 2>&1 && break
	[ "$i" = 100 ] && { cat "$tmp/serve.log"; echo "browser-check: the gateway did not start" >&2; exit 1; }
	sleep 0.1
done
mq() { "$tmp/anysqs" mq --endpoint "http://127.0.0.1:$api" --region us-east-1 --access-key-id "$key" --secret-access-key "$secret" "$@"; }
depth() { mq --output json dlq -q orders --sample 0 | python3 -c 'import json,sys; print(json.load(sys.stdin)["approximate_message_count"])'; }

# Three messages received once each with maxReceiveCount 1 land in orders-dlq.
mq create -q orders --dlq orders-dlq --max-receives 1 --attr VisibilityTimeout=1 >/dev/null
for b in m1 m2 m3; do mq send -q orders --body "$b" --attr customer=c-7 >/dev/null; done
for i in $(seq 10); do
	[ "$(depth)" = 3 ] && break
	[ "$i" = 10 ] && { echo "browser-check: the messages did not reach orders-dlq" >&2; exit 1; }
	mq receive -q orders -m 10 -w 2 >/dev/null
done
echo "orders-dlq holds $(depth) messages"

node scripts/browser/check.mjs "http://127.0.0.1:$admin/console" "$key" "$secret" orders-dlq "$REPORT" "$OUT"

# Through the SQS API: the three are back in orders, and the DLQ is empty.
bodies=$(mq --output json receive -q orders -m 10 -w 5 --visibility 300 |
	python3 -c 'import json,sys; print(" ".join(sorted(m["body"] for m in json.load(sys.stdin)["messages"])))')
left=$(depth)
echo "after the click: orders received [$bodies], orders-dlq holds $left"
if [ "$bodies" != "m1 m2 m3" ] || [ "$left" != 0 ]; then
	echo "browser-check: FAIL: the console's redrive did not move the messages back" >&2
	exit 1
fi
echo "browser-check: PASS"
