"""The one list of ops (include/TraceIR/Ops.def): every row has what it
says (unittests/OpListTest.cpp checks the C++ side: inference, kernels,
lowering), the Python side names only listed ops, and no other list of op
names exists in the sources.

"A list" is what adding an op would have to be edited in: four or more op
names in one brace or bracket list, one X-macro list, one set or dict
literal, or on consecutive lines of one table, outside Ops.def, the
generated docs and the tests (tests name the ops they test).
"""
import os
import re

import pytest

import traceir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
OPS_DEF = os.path.join(ROOT, "include", "TraceIR", "Ops.def")


def listed_ops():
    text = open(OPS_DEF).read()
    return re.findall(r"^TRACEIR_OP\((\w+),", text, re.M)


def test_the_list_is_sorted_and_has_no_duplicates():
    ops = listed_ops()
    assert len(ops) >= 80
    assert ops == sorted(ops) and len(set(ops)) == len(ops)


@pytest.mark.skipif(not traceir.HAS_COMPILER, reason="the registry is the compiler's")
def test_every_listed_op_is_in_the_registry_and_only_those():
    from traceir import _traceir
    for op in listed_ops():
        assert _traceir.op_signature(op) != "", op
    assert _traceir.op_signature("not_an_op") == ""


def test_the_importers_map_only_to_listed_ops():
    from traceir._import_common import ATEN_NAMES
    ops = set(listed_ops())
    assert set(ATEN_NAMES.values()) <= ops, set(ATEN_NAMES.values()) - ops


# Where lists of op names would hide: the sources, not the tests, the docs
# generated from Ops.def, or build outputs.
SOURCE_DIRS = ("include", "lib", "tools", "python", "scripts")
EXTENSIONS = (".h", ".cpp", ".cu", ".def", ".py", ".td", ".sh")
SKIP = {OPS_DEF}


def source_files():
    for d in SOURCE_DIRS:
        for dirpath, _, files in os.walk(os.path.join(ROOT, d)):
            for f in files:
                path = os.path.join(dirpath, f)
                if f.endswith(EXTENSIONS) and path not in SKIP and "_generated" not in f:
                    yield path


# The 2017 importer's table maps the 2017 tracer's own op names (a closed,
# historical vocabulary) to ops; OpListTest checks each maps to a listed one.
EXEMPT = {os.path.join("lib", "Import", "ANFImporter.cpp")}

_STRING = re.compile(r'"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'')
# Python's docstrings first, so that an apostrophe in one starts no string.
_PY_STRING = re.compile(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|' + _STRING.pattern)
_COMMENT = re.compile(r"//[^\n]*|/\*.*?\*/|#[^\n]*", re.S)


def op_name_lists(text, ops, python):
    """(line, names) for each list of 4+ op names: a bracketed span with no
    statement in it (an initializer, a literal, a condition), or a run of
    X(name) lines (an X-macro list)."""
    found = []
    # X-macro runs.
    run, start = [], 0
    for i, line in enumerate(text.split("\n")):
        m = re.fullmatch(r"\s*X\((\w+)\)\s*\\?\s*", line)
        if m and m.group(1) in ops:
            if not run:
                start = i + 1
            run.append(m.group(1))
        else:
            if len(run) >= 4:
                found.append((start, run))
            run = []
    # Bracketed spans: blank out comments (keeping line numbers), then
    # match brackets outside strings.
    def blank(m):
        if m.group(0).startswith(('"""', "'''")):
            return re.sub(r"[^\n]", " ", m.group(0))  # a docstring names no ops
        return re.sub(r"[^\n]", " ", m.group(0)) if not m.group(0).startswith(("\"", "'")) \
            else m.group(0)
    strings = _PY_STRING if python else _STRING
    pattern = re.compile(strings.pattern + "|" + (r"#[^\n]*" if python else
                                                  r"//[^\n]*|/\*.*?\*/"), re.S)
    code = pattern.sub(blank, text)
    stack = []
    spans = []
    pos = 0
    for m in re.finditer(strings.pattern + r"|[\[\](){};]", code):
        tok = m.group(0)
        if tok in "([{":
            stack.append([m.start(), False])
        elif tok in ")]}":
            if stack:
                begin, has_stmt = stack.pop()
                if not has_stmt:
                    spans.append((begin, m.end()))
                elif stack:
                    stack[-1][1] = True
        elif tok == ";":
            if stack:
                stack[-1][1] = True
        pos = m.end()
    for begin, end in spans:
        names = {n[1:-1] for n in _STRING.findall(code[begin:end])} & ops
        if len(names) >= 4:
            found.append((code.count("\n", 0, begin) + 1, sorted(names)))
    # Report the outermost span of each nest once.
    found.sort()
    out, last = [], None
    for line, names in found:
        if last and set(names) <= set(last[1]) and line >= last[0]:
            continue
        out.append((line, names))
        last = (line, names)
    return out


def test_no_other_list_of_op_names_exists():
    ops = set(listed_ops())
    offenders = []
    for path in source_files():
        rel = os.path.relpath(path, ROOT)
        if rel in EXEMPT:
            continue
        text = open(path, encoding="utf-8", errors="replace").read()
        for line, names in op_name_lists(text, ops, path.endswith(".py")):
            offenders.append(f"{rel}:{line}: {', '.join(names)}")
    assert not offenders, "lists of op names outside Ops.def (add a column to Ops.def " \
        "and expand it instead):\n" + "\n".join(offenders)


def test_the_scanner_finds_a_list():
    ops = set(listed_ops())
    cpp = 'const char *names[] = {\n  "relu", "neg",\n  "exp", "add"};\nvoid f() {}\n'
    assert op_name_lists(cpp, ops, False) == [(1, ["add", "exp", "neg", "relu"])]
    macro = "#define L(X) \\\n  X(relu) \\\n  X(neg) \\\n  X(exp) \\\n  X(add)\n"
    assert op_name_lists(macro, ops, False) == [(2, ["relu", "neg", "exp", "add"])]
    cond = 'if (n == "add" || n == "sub" || n == "mul" || n == "div")\n  x();\n'
    assert len(op_name_lists(cond, ops, False)) == 1
    # Per-op code (one name per statement) is not a list.
    body = 'void f() {\n  if (n == "add") a();\n  if (n == "sub") b();\n' \
           '  if (n == "mul") c();\n  if (n == "div") d();\n}\n'
    assert op_name_lists(body, ops, False) == []
    py = 'OPS = {"relu": 1, "neg": 2, "exp": 3, "add": 4}  # "sub"\n'
    assert op_name_lists(py, ops, True) == [(1, ["add", "exp", "neg", "relu"])]
    # An apostrophe in a docstring starts no string that swallows code.
    doc = 'def f():\n    """f\'s (x) "relu" "neg" "exp" "add"."""\n' \
          'OPS = ["relu", "neg", "exp", "add"]\n'
    assert op_name_lists(doc, ops, True) == [(3, ["add", "exp", "neg", "relu"])]
