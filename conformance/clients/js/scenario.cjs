// One scenario of conformance/clients with sqs-producer and sqs-consumer on the AWS SDK for
// JavaScript v3, against the gateway at ANYSQS_ENDPOINT:
//
//   node scenario.cjs standard|fifo QUEUE_NAME
//   node scenario.cjs dlq QUEUE_NAME MAX_RECEIVE_COUNT
//
// It creates its queues with the SDK, sends with sqs-producer, consumes with sqs-consumer and
// writes one JSON object per line to stdout: what it sent, what each handler saw, and a
// final {"event":"done"}. The Go test judges those lines and checks the queues itself
// through the SQS API; this script asserts nothing but the clients' own errors. The dlq
// scenario consumes until stdin closes (the Go test closes it once the dead letters are in
// the DLQ) and every message it was meant to handle is handled. Needs NODE_PATH naming the
// node_modules that `npm ci` installed from package-lock.json beside this file.
"use strict";

const {
  SQSClient,
  CreateQueueCommand,
  GetQueueAttributesCommand,
} = require("@aws-sdk/client-sqs");
const { Producer } = require("sqs-producer");
const { Consumer } = require("sqs-consumer");

const [mode, name, maxReceiveCount] = process.argv.slice(2);
const sqs = new SQSClient({
  endpoint: process.env.ANYSQS_ENDPOINT,
  region: "us-east-1",
  credentials: { accessKeyId: "AKIDCLIENTS", secretAccessKey: "clients-secret" },
  maxAttempts: 1, // a gateway error must reach the test, not be retried away
});

const emit = (o) => process.stdout.write(JSON.stringify(o) + "\n");

async function createQueue(queueName, attributes) {
  const out = await sqs.send(new CreateQueueCommand({ QueueName: queueName, Attributes: attributes }));
  emit({ event: "queue", name: queueName, url: out.QueueUrl });
  return out.QueueUrl;
}

// consume runs a consumer until done() says so after a handled message, then stops it and
// waits for its "stopped" event; any consumer error ends the script with a failure.
function consume(options, done) {
  return new Promise((resolve, reject) => {
    const consumer = Consumer.create({
      sqs,
      batchSize: 10,
      waitTimeSeconds: 1,
      pollingCompleteWaitTimeMs: 30000,
      ...options,
    });
    let stopping = false;
    const check = () => {
      if (!stopping && done()) {
        stopping = true;
        consumer.stop();
      }
    };
    consumer.on("message_processed", (m) => {
      emit({ event: "processed", id: m.MessageId, body: m.Body });
      check();
    });
    consumer.on("processing_error", (err, m) => emit({ event: "failed", body: m.Body, error: err.message }));
    consumer.on("error", (err) => reject(err));
    consumer.on("stopped", resolve);
    consumer.recheck = check;
    consumer.start();
    options.onStart && options.onStart(consumer);
  });
}

async function standard() {
  const url = await createQueue(name, { VisibilityTimeout: "60" });
  const producer = Producer.create({ sqs, queueUrl: url });
  const n = 25;
  const messages = [];
  for (let i = 0; i < n; i++) {
    messages.push({
      id: `m${i}`,
      body: `standard-${i}`,
      messageAttributes: { seq: { DataType: "Number", StringValue: String(i) } },
    });
  }
  const sent = await producer.send(messages);
  for (const s of sent) emit({ event: "sent", entry: s.Id, id: s.MessageId });
  let processed = 0;
  await consume(
    {
      queueUrl: url,
      messageAttributeNames: ["All"],
      handleMessage: async (m) => {
        emit({ event: "handled", id: m.MessageId, body: m.Body, seq: m.MessageAttributes?.seq?.StringValue });
        processed++;
        return m;
      },
    },
    () => processed >= n,
  );
}

async function fifo() {
  const url = await createQueue(name + ".fifo", { FifoQueue: "true", VisibilityTimeout: "60" });
  const producer = Producer.create({ sqs, queueUrl: url });
  const groups = ["a", "b", "c"];
  const perGroup = 6;
  const messages = [];
  for (let i = 0; i < perGroup; i++) {
    for (const g of groups) {
      messages.push({ id: `${g}${i}`, body: `${g}-${i}`, groupId: g, deduplicationId: `dedup-${g}-${i}` });
    }
  }
  // One at a time: the order of sends is the order each group must be delivered in.
  for (const m of messages) {
    const [s] = await producer.send(m);
    emit({ event: "sent", entry: s.Id, id: s.MessageId, seq: s.SequenceNumber });
  }
  // The same deduplication IDs again, with other bodies, within the 5-minute window: SQS
  // accepts them and answers with the first send's message ID, and delivers nothing more.
  for (const g of groups) {
    const [s] = await producer.send({ id: `dup${g}`, body: `${g}-duplicate`, groupId: g, deduplicationId: `dedup-${g}-0` });
    emit({ event: "duplicate", entry: s.Id, id: s.MessageId, seq: s.SequenceNumber });
  }
  let processed = 0;
  await consume(
    {
      queueUrl: url,
      messageSystemAttributeNames: ["MessageGroupId", "SequenceNumber"],
      // Its warning goes to stdout; one batch at a time, handled in order, is what FIFO needs.
      suppressFifoWarning: true,
      handleMessageBatch: async (batch) => {
        for (const m of batch) {
          emit({ event: "handled", id: m.MessageId, body: m.Body, group: m.Attributes?.MessageGroupId, seq: m.Attributes?.SequenceNumber });
        }
        processed += batch.length;
        return batch;
      },
    },
    () => processed >= groups.length * perGroup,
  );
}

async function dlq() {
  const dlqUrl = await createQueue(name + "-dlq", {});
  const attrs = await sqs.send(new GetQueueAttributesCommand({ QueueUrl: dlqUrl, AttributeNames: ["QueueArn"] }));
  const url = await createQueue(name, {
    VisibilityTimeout: "60",
    RedrivePolicy: JSON.stringify({ deadLetterTargetArn: attrs.Attributes.QueueArn, maxReceiveCount: Number(maxReceiveCount) }),
  });
  const producer = Producer.create({ sqs, queueUrl: url });
  const messages = [];
  for (let i = 0; i < 3; i++) {
    messages.push({ id: `ok${i}`, body: `ok-${i}` }, { id: `fail${i}`, body: `fail-${i}` });
  }
  const sent = await producer.send(messages);
  for (const s of sent) emit({ event: "sent", entry: s.Id, id: s.MessageId });
  let ok = 0;
  let stdinClosed = false;
  await consume(
    {
      queueUrl: url,
      messageSystemAttributeNames: ["ApproximateReceiveCount"],
      // A failed message is visible again at once, so redelivery waits on no timeout.
      terminateVisibilityTimeout: true,
      handleMessage: async (m) => {
        const receives = m.Attributes?.ApproximateReceiveCount;
        emit({ event: "handled", id: m.MessageId, body: m.Body, receives });
        if (m.Body.startsWith("fail-")) throw new Error(`handler refuses ${m.Body}`);
        ok++;
        return m;
      },
      onStart: (consumer) => {
        process.stdin.on("end", () => {
          stdinClosed = true;
          consumer.recheck();
        });
        process.stdin.resume();
      },
    },
    () => stdinClosed && ok >= 3,
  );
}

const scenarios = { standard, fifo, dlq };
if (!scenarios[mode] || !name || (mode === "dlq") !== (maxReceiveCount !== undefined)) {
  process.stderr.write("usage: node scenario.cjs standard|fifo QUEUE_NAME | dlq QUEUE_NAME MAX_RECEIVE_COUNT\n");
  process.exit(2);
}
scenarios[mode]().then(
  () => emit({ event: "done" }),
  (err) => {
    process.stderr.write(`scenario ${mode}: ${err.stack || err}\n`);
    process.exit(1);
  },
);
