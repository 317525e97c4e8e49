#!/usr/bin/env bash
# Checks `anysqs serve --config configs/firestore.yaml` end to end on a fresh emulator
# project: the AWS CLI (Query protocol) and aws-sdk-go-v2 (JSON protocol, through
# cmd/anysqs-load) create queues, send, receive and delete. Exits non-zero on any failure.
#
#   scripts/firestore-serve-check.sh      (starts the emulator through scripts/services/firestore.sh)
set -euo pipefail
cd "$(dirname "$0")/.."
eval "$(scripts/services/firestore.sh start)"
project=anysqs-local # the project configs/firestore.yaml names
listen=127.0.0.1:${ANYSQS_CHECK_PORT:-19424}
url=http://$listen
# A fresh emulator project: drop whatever an earlier run left there.
curl -fsS -X DELETE "http://$FIRESTORE_EMULATOR_HOST/emulator/v1/projects/$project/databases/(default)/documents" >/dev/null
bin=$(mktemp -d)
trap 'kill "$pid" 2>/dev/null || true; rm -rf "$bin"' EXIT
go build -o "$bin/anysqs" ./cmd/anysqs
go build -o "$bin/anysqs-load" ./cmd/anysqs-load
ANYSQS_LISTEN=$listen "$bin/anysqs" serve --config configs/firestore.yaml >"$bin/serve.log" 2>&1 &
pid=$!
for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/${listen%:*}/${listen#*:}") 2>/dev/null && break; sleep 0.1; done

export AWS_ACCESS_KEY_ID=check AWS_SECRET_ACCESS_KEY=check AWS_DEFAULT_REGION=us-east-1
aws() { /usr/bin/aws --endpoint-url "$url" --output json "$@"; }
echo "== AWS CLI $(/usr/bin/aws --version 2>&1 | cut -d' ' -f1) (Query protocol)"
q=$(aws sqs create-queue --queue-name cli-check | python3 -c 'import json,sys; print(json.load(sys.stdin)["QueueUrl"])')
aws sqs send-message --queue-url "$q" --message-body hello-from-cli >/dev/null
msg=$(aws sqs receive-message --queue-url "$q" --wait-time-seconds 2)
body=$(echo "$msg" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Messages"][0]["Body"])')
handle=$(echo "$msg" | python3 -c 'import json,sys; print(json.load(sys.stdin)["Messages"][0]["ReceiptHandle"])')
[ "$body" = hello-from-cli ] || { echo "received $body"; exit 1; }
aws sqs delete-message --queue-url "$q" --receipt-handle "$handle"
f=$(aws sqs create-queue --queue-name cli-check.fifo --attributes FifoQueue=true,ContentBasedDeduplication=true |
	python3 -c 'import json,sys; print(json.load(sys.stdin)["QueueUrl"])')
aws sqs send-message --queue-url "$f" --message-body one --message-group-id g >/dev/null
dup=$(aws sqs send-message --queue-url "$f" --message-body one --message-group-id g)
aws sqs get-queue-attributes --queue-url "$f" --attribute-names ApproximateNumberOfMessages |
	python3 -c 'import json,sys; n=json.load(sys.stdin)["Attributes"]["ApproximateNumberOfMessages"]; assert n=="1", n'
echo "standard queue: send, receive, delete; FIFO: deduplicated resend ($(echo "$dup" | python3 -c 'import json,sys; print(json.load(sys.stdin)["SequenceNumber"])')), count 1: ok"

echo "== aws-sdk-go-v2 (JSON protocol) through anysqs-load"
"$bin/anysqs-load" --paths gateway --mode closed --endpoint "$url" --workers 2 --batch 10 --warmup 1s --duration 3s
echo "== ok: anysqs serve --config configs/firestore.yaml served both protocols"
