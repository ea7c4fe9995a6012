#!/usr/bin/env python3
"""Corrupts saved executables (.trx) for lit tests (stdlib only).

  trx.py corrupt IN OUT KIND

KIND:
  truncated       the first half of IN
  short           the first 12 bytes: shorter than the 16-byte prefix
  magic           "TRACEIRY" instead of "TRACEIRX"
  major           format 2.0 in the prefix, the rest as IN
  garbage         IN's valid prefix followed by 512 bytes that are no
                  FlatBuffer
"""
import struct
import sys


def corrupt(src, dst, kind):
    data = open(src, "rb").read()
    if kind == "truncated":
        out = data[: len(data) // 2]
    elif kind == "short":
        out = data[:12]
    elif kind == "magic":
        out = b"TRACEIRY" + data[8:]
    elif kind == "major":
        out = data[:8] + struct.pack("<II", 2, 0) + data[16:]
    elif kind == "garbage":
        out = data[:16] + bytes(range(256)) * 2
    else:
        sys.exit("unknown corruption " + kind)
    open(dst, "wb").write(out)


if __name__ == "__main__":
    if len(sys.argv) != 5 or sys.argv[1] != "corrupt":
        sys.exit(__doc__)
    corrupt(sys.argv[2], sys.argv[3], sys.argv[4])
