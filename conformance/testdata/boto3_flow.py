"""Core SQS flows through boto3 against an anysqs gateway.

Usage: boto3_flow.py ENDPOINT NAME_PREFIX PROTOCOL
PROTOCOL is the wire protocol this boto3 is expected to speak ("query" for Debian's
boto3 1.26, "json" for current releases). Exits non-zero at the first difference.
"""
import hashlib
import sys
import urllib.error
import urllib.request

import boto3


def main():
    endpoint, prefix, protocol = sys.argv[1], sys.argv[2], sys.argv[3]
    sqs = boto3.client("sqs", endpoint_url=endpoint, region_name="us-east-1")
    got = sqs.meta.service_model.protocol
    assert got == protocol, "boto3 %s speaks %s, expected %s" % (boto3.__version__, got, protocol)
    print("boto3", boto3.__version__, "protocol", got)

    name = prefix + "boto3-" + protocol
    url = sqs.create_queue(QueueName=name, Attributes={"VisibilityTimeout": "40"})["QueueUrl"]
    assert url.endswith("/" + name), url
    assert sqs.get_queue_url(QueueName=name)["QueueUrl"] == url
    assert sqs.list_queues(QueueNamePrefix=name)["QueueUrls"] == [url]
    attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attrs["VisibilityTimeout"] == "40", attrs

    body = "boto3 body \u00e9\U0001F600"
    sent = sqs.send_message(
        QueueUrl=url,
        MessageBody=body,
        MessageAttributes={
            "s": {"DataType": "String", "StringValue": "text"},
            "n": {"DataType": "Number.int", "StringValue": "42"},
            "b": {"DataType": "Binary", "BinaryValue": b"\x00\x01\xff"},
        },
    )
    assert sent["MD5OfMessageBody"] == hashlib.md5(body.encode()).hexdigest(), sent
    msgs = sqs.receive_message(
        QueueUrl=url, AttributeNames=["All"], MessageAttributeNames=["All"], MaxNumberOfMessages=10
    )["Messages"]
    assert len(msgs) == 1, msgs
    m = msgs[0]
    assert m["Body"] == body and m["MessageId"] == sent["MessageId"], m
    assert m["MD5OfMessageAttributes"] == sent["MD5OfMessageAttributes"], m
    ma = m["MessageAttributes"]
    assert ma["s"]["StringValue"] == "text" and ma["n"]["DataType"] == "Number.int", ma
    assert ma["b"]["BinaryValue"] == b"\x00\x01\xff", ma
    assert m["Attributes"]["ApproximateReceiveCount"] == "1", m
    sqs.change_message_visibility(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"], VisibilityTimeout=0)
    again = sqs.receive_message(QueueUrl=url)["Messages"]
    assert again[0]["MessageId"] == m["MessageId"], again
    sqs.delete_message(QueueUrl=url, ReceiptHandle=again[0]["ReceiptHandle"])

    out = sqs.send_message_batch(
        QueueUrl=url,
        Entries=[
            {"Id": "ok1", "MessageBody": "one"},
            {"Id": "bad", "MessageBody": "nul\x00"},
            {"Id": "ok2", "MessageBody": "two"},
        ],
    )
    assert sorted(e["Id"] for e in out["Successful"]) == ["ok1", "ok2"], out
    assert [e["Id"] for e in out.get("Failed", [])] == ["bad"] and out["Failed"][0]["SenderFault"], out
    msgs = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10)["Messages"]
    out = sqs.delete_message_batch(
        QueueUrl=url,
        Entries=[{"Id": "m%d" % i, "ReceiptHandle": x["ReceiptHandle"]} for i, x in enumerate(msgs)]
        + [{"Id": "garbage", "ReceiptHandle": "not-a-handle"}],
    )
    assert len(out["Successful"]) == len(msgs), out
    assert [e["Id"] for e in out["Failed"]] == ["garbage"], out
    assert out["Failed"][0]["Code"] == "ReceiptHandleIsInvalid", out

    fifo = sqs.create_queue(
        QueueName=name + ".fifo", Attributes={"FifoQueue": "true", "ContentBasedDeduplication": "true"}
    )["QueueUrl"]
    a = sqs.send_message(QueueUrl=fifo, MessageBody="same", MessageGroupId="g")
    b = sqs.send_message(QueueUrl=fifo, MessageBody="same", MessageGroupId="g")
    assert a["SequenceNumber"] and (a["MessageId"], a["SequenceNumber"]) == (b["MessageId"], b["SequenceNumber"]), (a, b)

    try:
        sqs.get_queue_url(QueueName=name + "-missing")
        raise AssertionError("get_queue_url of a missing queue succeeded")
    except sqs.exceptions.QueueDoesNotExist as e:
        code = e.response["Error"]["Code"]
        assert code in ("AWS.SimpleQueueService.NonExistentQueue", "QueueDoesNotExist"), code

    if protocol == "query":
        # A presigned URL carries its Query request; JSON requests need headers no URL has.
        presigned = sqs.generate_presigned_url(
            "send_message", Params={"QueueUrl": url, "MessageBody": "presigned"}, ExpiresIn=300, HttpMethod="GET")
        with urllib.request.urlopen(presigned) as resp:
            assert resp.status == 200 and b"<MessageId>" in resp.read(), presigned
        tampered = presigned.replace("MessageBody=presigned", "MessageBody=tampered")
        assert tampered != presigned, presigned
        try:
            urllib.request.urlopen(tampered)
            raise AssertionError("a tampered presigned URL was accepted")
        except urllib.error.HTTPError as e:
            assert e.code == 403 and b"SignatureDoesNotMatch" in e.read(), e

    sqs.delete_queue(QueueUrl=url)
    sqs.delete_queue(QueueUrl=fifo)
    assert not sqs.list_queues(QueueNamePrefix=name).get("QueueUrls"), "queues left after delete"
    print("ok")


if __name__ == "__main__":
    main()
