#!/usr/bin/env python3
"""FileCheck for printed floating-point values, with a tolerance.

Tests that print computed floats must not depend on bit-identical BLAS or libm
results: OpenBLAS picks other kernels on other CPUs (Intel, AMD) and glibc
picks other exp/tanh variants, so the last printed digit may differ. This
reads the check lines of a test file and matches them against standard input
as FileCheck does, comparing numbers within a tolerance instead of as text.

  fpcheck.py TESTFILE [--prefix FP] [--rtol 1e-5] [--atol 1e-5] < output

Check lines (after the prefix and ':'):
  FP: text        the first following input line that matches
  FP-NEXT: text   the very next input line
  FP-NOT: text    no line between the previous match and the next match

A line matches when its tokens (numbers, words, single punctuation marks;
whitespace is not significant) equal the check's, numbers compared as
|got - want| <= atol + rtol * |want| (nan matches nan, inf matches inf of
the same sign), except that two integers (no '.', no exponent) below 100000
compare exactly: shape dims, counts and small integral values are no
rounding matter, and %g prints every float below that with a '.' unless it
is integral. In a check, `V*N` stands for N copies of the number V, and
`{{regex}}` makes the line a regular-expression match without tolerance
(FileCheck's syntax: text outside {{ }} is literal).
"""
import argparse
import math
import re
import sys

NUMBER = r"[-+]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?|inf|nan)"
# A word first, so that digits glued to letters (f32, output0, 2x3xf32's
# x3xf32) stay words; then a number, optionally repeated (V*N); then any
# other non-space character on its own.
TOKEN = re.compile(rf"(?P<word>[A-Za-z_]\w*)|(?P<num>{NUMBER})(?:\*(?P<rep>\d+))?|(?P<other>\S)")


class Num(float):
    """A number token, knowing whether it was written as an integer."""

    def __new__(cls, text):
        n = super().__new__(cls, float(text))
        n.integer = bool(INTEGER.fullmatch(text))
        return n


def tokens(text, allow_repeat):
    out = []
    for m in TOKEN.finditer(text):
        word, num, rep = m.group("word"), m.group("num"), m.group("rep")
        if word is not None:
            out.append(Num(word) if word in ("inf", "nan") else word)
        elif num is not None:
            value = Num(num)
            if rep is not None and not allow_repeat:
                out += [value, "*", Num(rep)]
            else:
                out += [value] * (int(rep) if rep is not None else 1)
        else:
            out.append(m.group("other"))
    return out


INTEGER = re.compile(r"[-+]?\d+")


def close(got, want, rtol, atol, exact=False):
    if exact:
        return got == want
    if math.isnan(want):
        return math.isnan(got)
    if math.isinf(want):
        return got == want
    return abs(got - want) <= atol + rtol * abs(want)


def regex_of(check):
    parts = re.split(r"\{\{(.*?)\}\}", check)
    return "".join(re.escape(p) if i % 2 == 0 else f"(?:{p})" for i, p in enumerate(parts))


def why_not(line, check, rtol, atol):
    """None if `line` matches `check`, else what differs."""
    if "{{" in check:
        return None if re.search(regex_of(check), line) else "regex does not match"
    got, want = tokens(line, False), tokens(check, True)
    if len(got) != len(want):
        return f"{len(got)} tokens, expected {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        if isinstance(w, float):
            if not isinstance(g, float):
                return f"token {i}: '{g}' where {w:g} was expected"
            exact = g.integer and w.integer and abs(w) < 100000
            if exact and g != w:
                return f"token {i}: {g:g} differs from {w:g} (integers compare exactly)"
            if not close(g, w, rtol, atol, exact):
                return f"token {i}: {g!r} differs from {w!r} by more than atol {atol} + rtol {rtol}"
        elif g != w:
            return f"token {i}: '{g}' where '{w}' was expected"
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("testfile")
    ap.add_argument("--prefix", default="FP")
    ap.add_argument("--rtol", type=float, default=1e-5)
    ap.add_argument("--atol", type=float, default=1e-5)
    args = ap.parse_args()
    pat = re.compile(rf"\b{re.escape(args.prefix)}(-[A-Z-]+)?:(.*)$")
    checks = []
    with open(args.testfile) as f:
        for n, text in enumerate(f, 1):
            m = pat.search(text)
            if m:
                kind = m.group(1) or ""
                if kind not in ("", "-NEXT", "-NOT"):
                    sys.exit(f"{args.testfile}:{n}: unknown check '{args.prefix}{kind}:' "
                             f"(fpcheck has {args.prefix}:, {args.prefix}-NEXT:, {args.prefix}-NOT:)")
                checks.append((n, kind, m.group(2).strip()))
    if not checks:
        sys.exit(f"{args.testfile}: no '{args.prefix}:' check lines")
    lines = sys.stdin.read().splitlines()
    pos = 0  # the next input line to look at
    nots = []
    for n, kind, check in checks:
        where = f"{args.testfile}:{n}"
        if kind == "-NOT":
            nots.append((n, check))
            continue
        if kind == "-NEXT":
            if pos >= len(lines):
                sys.exit(f"{where}: {args.prefix}-NEXT: no line left for '{check}'")
            reason = why_not(lines[pos], check, args.rtol, args.atol)
            if reason:
                sys.exit(f"{where}: {args.prefix}-NEXT: input line {pos + 1} '{lines[pos][:200]}' "
                         f"does not match '{check[:200]}': {reason}")
            found = pos
        else:
            found = next((i for i in range(pos, len(lines))
                          if why_not(lines[i], check, args.rtol, args.atol) is None), None)
            if found is None:
                near = [i for i in range(pos, len(lines))]
                hint = ""
                if near:
                    hint = f"; first candidate line {near[0] + 1}: " + (
                        why_not(lines[near[0]], check, args.rtol, args.atol) or "")
                sys.exit(f"{where}: {args.prefix}: no input line from {pos + 1} on matches "
                         f"'{check[:200]}'{hint}")
        for nn, nc in nots:
            for i in range(pos, found):
                if why_not(lines[i], nc, args.rtol, args.atol) is None:
                    sys.exit(f"{args.testfile}:{nn}: {args.prefix}-NOT: input line {i + 1} "
                             f"matches '{nc[:200]}'")
        nots = []
        pos = found + 1
    for nn, nc in nots:
        for i in range(pos, len(lines)):
            if why_not(lines[i], nc, args.rtol, args.atol) is None:
                sys.exit(f"{args.testfile}:{nn}: {args.prefix}-NOT: input line {i + 1} "
                         f"matches '{nc[:200]}'")


if __name__ == "__main__":
    main()
