#!/usr/bin/env python3
"""A tiny safetensors writer and dumper for lit tests (stdlib only).

  st.py write OUT name=f32[2,3]:1,2,3,4,5,6 idx=i64[2]:0,1 ...
  st.py dump FILE          # prints "name: f32[2, 3] = 1 2 3 4 5 6", one per line
  st.py corrupt OUT KIND   # writes a malformed file (see KINDS)
"""
import json
import math
import struct
import sys

FORMATS = {"f32": ("F32", "f"), "f64": ("F64", "d"), "i64": ("I64", "q"),
           "i32": ("I32", "i"), "bool": ("BOOL", "?"), "u8": ("U8", "B")}
NAMES = {v[0]: k for k, v in FORMATS.items()}


def parse(spec):
    name, rest = spec.split("=", 1)
    typ, _, values = rest.partition(":")
    dtype, shape = typ.split("[")
    shape = [int(d) for d in shape.rstrip("]").split(",") if d]
    n = math.prod(shape)
    vals = [v for v in values.split(",") if v] if values else []
    if vals and vals[0].startswith("range"):
        vals = [str(i) for i in range(n)]
    if len(vals) == 1 and n != 1:
        vals = vals * n
    assert len(vals) == n, f"{name}: {len(vals)} values for shape {shape}"
    code = FORMATS[dtype][1]
    conv = float if code in "fd" else (lambda s: s in ("1", "True", "true")) if code == "?" else int
    return name, dtype, shape, struct.pack("<%d%s" % (n, code), *[conv(v) for v in vals])


def write(path, tensors):
    header, blobs, off = {}, [], 0
    for name, dtype, shape, data in tensors:
        header[name] = {"dtype": FORMATS[dtype][0], "shape": shape,
                        "data_offsets": [off, off + len(data)]}
        blobs.append(data)
        off += len(data)
    h = json.dumps(header).encode()
    h += b" " * ((8 - len(h) % 8) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(h)) + h + b"".join(blobs))


def dump(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = json.loads(raw[8:8 + n])
    data = raw[8 + n:]
    for name in sorted(k for k in header if k != "__metadata__"):
        e = header[name]
        dtype = NAMES[e["dtype"]]
        code = FORMATS[dtype][1]
        b, end = e["data_offsets"]
        count = math.prod(e["shape"])
        vals = struct.unpack("<%d%s" % (count, code), data[b:end])
        text = " ".join(("%.6g" % v) if code in "fd" else str(int(v)) for v in vals)
        print(f"{name}: {dtype}{e['shape']} = {text}")


def corrupt(path, kind):
    good = {"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    body = struct.pack("<2f", 1, 2)
    if kind == "short":
        open(path, "wb").write(b"\x01\x02")
    elif kind == "header-past-end":
        open(path, "wb").write(struct.pack("<Q", 1 << 40) + b"{}")
    elif kind == "bad-json":
        h = b"{not json"
        open(path, "wb").write(struct.pack("<Q", len(h)) + h)
    elif kind == "bad-dtype":
        good["x"]["dtype"] = "F8"
        h = json.dumps(good).encode()
        open(path, "wb").write(struct.pack("<Q", len(h)) + h + body)
    elif kind == "offsets-past-end":
        good["x"]["data_offsets"] = [0, 80]
        h = json.dumps(good).encode()
        open(path, "wb").write(struct.pack("<Q", len(h)) + h + body)
    elif kind == "size-mismatch":
        good["x"]["shape"] = [3]
        h = json.dumps(good).encode()
        open(path, "wb").write(struct.pack("<Q", len(h)) + h + body)
    else:
        sys.exit(f"unknown kind {kind}")


if __name__ == "__main__":
    cmd = sys.argv[1]
    if cmd == "write":
        write(sys.argv[2], [parse(s) for s in sys.argv[3:]])
    elif cmd == "dump":
        dump(sys.argv[2])
    elif cmd == "corrupt":
        corrupt(sys.argv[2], sys.argv[3])
