#!/usr/bin/env python3
"""Writes md5_vectors.json: MD5OfMessageAttributes digests computed independently of the
Go code, from the algorithm as the SQS developer guide describes it.

Run from this directory: python3 md5_vectors.py > md5_vectors.json
Binary values are given base64-encoded in the JSON.
"""
import base64
import hashlib
import json
import struct


def field(b):
    return struct.pack(">I", len(b)) + b


def digest(attrs):
    if not attrs:
        return ""
    buf = b""
    for name in sorted(attrs, key=lambda n: n.encode("utf-8")):
        a = attrs[name]
        buf += field(name.encode("utf-8")) + field(a["DataType"].encode("utf-8"))
        if a["DataType"].split(".")[0] == "Binary":
            buf += b"\x02" + field(a["BinaryValue"])
        else:
            buf += b"\x01" + field(a["StringValue"].encode("utf-8"))
    return hashlib.md5(buf).hexdigest()


CASES = {
    "empty": {},
    "one string": {"a": {"DataType": "String", "StringValue": "b"}},
    "number and custom": {
        "n": {"DataType": "Number", "StringValue": "-1.5e3"},
        "t": {"DataType": "String.custom", "StringValue": "x"},
    },
    "binary": {"bin": {"DataType": "Binary.gif", "BinaryValue": bytes(range(256))}},
    "sort order is bytewise": {
        "B": {"DataType": "String", "StringValue": "upper"},
        "a": {"DataType": "String", "StringValue": "lower"},
        "_": {"DataType": "String", "StringValue": "underscore"},
        "a.b": {"DataType": "String", "StringValue": "dotted"},
        "a-b": {"DataType": "String", "StringValue": "hyphen"},
    },
    "unicode value": {"u": {"DataType": "String", "StringValue": "h\u00e9llo \u4e16\u754c \U0001F600"}},
    "trace header": {"AWSTraceHeader": {"DataType": "String",
                                        "StringValue": "Root=1-5759e988-bd862e3fe1be46a994272793;Sampled=1"}},
    "ten": {f"k{i}": {"DataType": "Number" if i % 2 else "String", "StringValue": str(i * 7)} for i in range(10)},
}

out = []
for name, attrs in CASES.items():
    enc = {}
    for k, a in attrs.items():
        e = {"DataType": a["DataType"]}
        if "BinaryValue" in a:
            e["BinaryValue"] = base64.b64encode(a["BinaryValue"]).decode()
        else:
            e["StringValue"] = a["StringValue"]
        enc[k] = e
    out.append({"name": name, "attributes": enc, "md5": digest(attrs)})
print(json.dumps(out, indent=1, ensure_ascii=False))
