"""A Celery app on kombu's SQS transport, run against anysqs by conformance/clients.

The Go test sends tasks with `python3 anysqs_tasks.py send N` and runs a worker of this
app (`python3 -m celery -A anysqs_tasks worker`), both through the gateway at
ANYSQS_ENDPOINT: kombu publishes with boto3 and the worker receives with kombu's own
pycurl client, both on the Query protocol. Each task execution reports what it did as one
JSON message on a second queue (ANYSQS_RESULTS_URL, sent with boto3), so the test learns
what ran from the gateway, not from Celery's bookkeeping. ANYSQS_QUEUE_PREFIX starts the
name of every queue Celery creates.
"""

import json
import os
import sys
from urllib.parse import urlsplit

import boto3
from celery import Celery

# The credentials every client of conformance/clients signs with; the shipped configs
# verify no signature.
ACCESS_KEY, SECRET_KEY = "AKIDCLIENTS", "clients-secret"

endpoint = urlsplit(os.environ["ANYSQS_ENDPOINT"])
app = Celery("anysqs_tasks")
app.conf.update(
    # kombu 5.2 takes the SQS endpoint from the broker URL's host and port, and the
    # scheme from is_secure.
    broker_url=f"sqs://{ACCESS_KEY}:{SECRET_KEY}@{endpoint.hostname}:{endpoint.port}",
    broker_transport_options={
        "region": "us-east-1",
        "is_secure": endpoint.scheme == "https",
        "queue_name_prefix": os.environ["ANYSQS_QUEUE_PREFIX"],
        "visibility_timeout": 60,
        "wait_time_seconds": 1,  # a short long poll: the worker notices its shutdown sooner
        "polling_interval": 0.1,
    },
    broker_connection_retry=False,  # a gateway error ends the run instead of a retry loop
    task_default_queue="tasks",
    task_acks_late=True,  # delete a message only after its task ran
    worker_prefetch_multiplier=1,
    worker_enable_remote_control=False,  # SQS has no fanout for the pidbox
    worker_send_task_events=False,
    worker_hijack_root_logger=False,
)

_results = boto3.client(
    "sqs",
    endpoint_url=os.environ["ANYSQS_ENDPOINT"],
    region_name="us-east-1",
    aws_access_key_id=ACCESS_KEY,
    aws_secret_access_key=SECRET_KEY,
)


def report(**fields):
    """Send one record of what a task did to the results queue."""
    _results.send_message(QueueUrl=os.environ["ANYSQS_RESULTS_URL"], MessageBody=json.dumps(fields))


@app.task(bind=True)
def add(self, x, y):
    report(task="add", id=self.request.id, args=[x, y], result=x + y)
    return x + y


@app.task(bind=True, max_retries=2)
def flaky(self, key):
    """Fails twice, each time retrying through the broker, then succeeds."""
    attempt = self.request.retries
    if attempt < 2:
        report(task="flaky", id=self.request.id, key=key, attempt=attempt, outcome="retry")
        raise self.retry(countdown=0, exc=RuntimeError(f"flaky {key} attempt {attempt}"))
    report(task="flaky", id=self.request.id, key=key, attempt=attempt, outcome="ok")
    return key


@app.task(bind=True)
def boom(self):
    """Fails for good: the worker acknowledges the failure and does not run it again."""
    report(task="boom", id=self.request.id, outcome="raised")
    raise ValueError("boom refuses to work")


def send(n):
    """Send n add tasks, one flaky and one boom task; print each task id as a JSON line."""
    for i in range(n):
        r = add.delay(i, 100)
        print(json.dumps({"task": "add", "id": r.id, "args": [i, 100]}), flush=True)
    r = flaky.delay("k1")
    print(json.dumps({"task": "flaky", "id": r.id}), flush=True)
    r = boom.delay()
    print(json.dumps({"task": "boom", "id": r.id}), flush=True)


if __name__ == "__main__":
    if len(sys.argv) != 3 or sys.argv[1] != "send":
        sys.exit("usage: anysqs_tasks.py send N")
    send(int(sys.argv[2]))
