#!/usr/bin/env python3
"""A tiny safetensors writer and dumper for lit tests (stdlib only).

  st.py write OUT name=f32[2,3]:1,2,3,4,5,6 idx=i64[2]:0,1 ...
  st.py dump FILE          # prints "name: f32[2, 3] = 1 2 3 4 5 6", one per line
  st.py corrupt OUT KIND   # writes a malformed file (see corrupt())
  st.py check-padding FILE # fails unless the header is padded as the
                           # reference writer pads it (spaces, to 8 bytes)
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


def check_padding(path):
    raw = open(path, "rb").read()
    (n,) = struct.unpack("<Q", raw[:8])
    header = raw[8:8 + n]
    text = header.rstrip(b" ")
    json.loads(text)
    if n % 8 or len(header) - len(text) >= 8 or not text.startswith(b"{"):
        sys.exit(f"{path}: header of {n} bytes is not padded with spaces to 8: {header!r}")


def emit(path, header, body=b"", length=None):
    """Writes a file of `header` (bytes or a JSON-able dict, padded with
    spaces to 8 as writers do) and `body`; `length` overrides the length."""
    if not isinstance(header, bytes):
        header = json.dumps(header).encode()
        header += b" " * ((8 - len(header) % 8) % 8)
    n = len(header) if length is None else length
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", n) + header + body)


def corrupt(path, kind):
    good = {"x": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]}}
    body = struct.pack("<2f", 1, 2)
    x = good["x"]
    two = lambda b, e: {"a": {"dtype": "F32", "shape": [2], "data_offsets": [0, 8]},
                        "b": {"dtype": "F32", "shape": [2], "data_offsets": [b, e]}}
    if kind == "short":
        open(path, "wb").write(b"\x01\x02")
    elif kind == "header-past-end":
        emit(path, b"{}", length=1000)
    elif kind == "header-too-large":
        emit(path, b"{}" + b" " * 6, length=100_000_001)
    elif kind == "bad-json":
        emit(path, b"{not json")
    elif kind == "bad-dtype":
        x["dtype"] = "F8"
        emit(path, good, body)
    elif kind == "offsets-past-end":
        x["data_offsets"] = [0, 80]
        emit(path, good, body)
    elif kind == "size-mismatch":
        x["shape"] = [3]
        emit(path, good, body)
    # The header length off by one: one byte short takes the last padding
    # space as data (every value shifted by a byte), one byte long takes the
    # first data byte as JSON.
    elif kind in ("header-short", "header-long"):
        h = json.dumps(good).encode()
        assert len(h) % 8, "needs padding to lose a byte of"
        h += b" " * ((8 - len(h) % 8) % 8)
        emit(path, h, body, length=len(h) + (-1 if kind == "header-short" else 1))
    elif kind == "not-brace":
        emit(path, b" " + json.dumps(good).encode(), body)
    elif kind == "trailing-garbage":
        emit(path, json.dumps(good).encode() + b"  xyz", body)
    elif kind == "deep":
        # 100000 nested arrays: llvm::json's recursive parser overflowed the
        # stack on this.
        depth = 100_000
        h = ('{"x": {"dtype": "F32", "shape": ' + "[" * depth + "]" * depth +
             ', "data_offsets": [0, 8]}}').encode()
        emit(path, h, body)
    elif kind == "duplicate":
        e = json.dumps(x)
        emit(path, ('{"x": %s, "x": %s}' % (e, e)).encode(), body)
    elif kind == "overlap":
        emit(path, two(4, 12), body + body[:4])
    elif kind == "gap":
        emit(path, two(12, 20), body * 2 + body[:4])
    elif kind == "not-from-zero":
        x["data_offsets"] = [4, 12]
        emit(path, good, body + body[:4])
    elif kind == "trailing-data":
        emit(path, good, body + b"\0\0\0\0")
    elif kind == "shape-overflow":
        x["shape"] = [1 << 40, 1 << 40]
        emit(path, good, body)
    elif kind == "negative-dim":
        x["shape"] = [-2]
        emit(path, good, body)
    elif kind == "bad-metadata":
        good["__metadata__"] = {"format": "pt", "step": 3}
        emit(path, good, body)
    elif kind == "unknown-field":
        x["strides"] = [1]
        emit(path, good, body)
    elif kind == "missing-field":
        del x["dtype"]
        emit(path, good, body)
    elif kind == "float-offsets":
        x["data_offsets"] = [0, 8.0]
        emit(path, good, body)
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
    elif cmd == "check-padding":
        check_padding(sys.argv[2])
    else:
        sys.exit(f"unknown command {cmd}")
