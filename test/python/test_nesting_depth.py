"""Deeply nested input through the Python package: a clear TraceIRError at
the bracket that goes too deep, never a crash of the interpreter (a 2017
trace literal 10000 deep killed Python with SIGSEGV through import_anf).
The same bounds as the tools: 64 nested tuples and lists in a scalar, 256
brackets in any MLIR text. Each deep case also runs on a thread with a
small stack, as Python threads may have one.
"""
import threading

import pytest

import traceir

GRAPH = ('trace.graph @g(%x: tensor<2xf32> {{trace.input = "x"}}) -> tensor<2xf32> {{\n'
         '  %0 = pyop "foo"(%x, {nest}) : (tensor<2xf32>) -> tensor<2xf32>\n'
         '  ret %0 : tensor<2xf32>\n}}\n')
ANF = "graph g\ninput %0 : f32[2] x\n%1 = Foo %0, {nest} : f32[2]\nRet %1\n"


def nest(depth):
    return "[" * depth + "1" + "]" * depth


def on_small_stack(fn):
    """Runs fn on a thread with a 1 MiB stack; returns what it raised."""
    old = threading.stack_size(1 << 20)
    caught = []

    def body():
        try:
            fn()
        except Exception as e:  # noqa: BLE001 - handed to the test
            caught.append(e)
    try:
        t = threading.Thread(target=body)
        t.start()
        t.join()
    finally:
        threading.stack_size(old)
    return caught[0] if caught else None


def test_import_anf_at_the_bound_round_trips():
    def go():
        m = traceir.import_anf(ANF.format(nest=nest(64)), name="ok.trace")
        again = traceir.Module.parse(str(m))
        assert nest(64) in str(again)
    go()
    # Parsing (our scalars, then MLIR's generic attribute parser) and
    # printing at the bound fit a 1 MiB stack.
    assert on_small_stack(go) is None


@pytest.mark.parametrize("depth", [65, 10000, 100000])
def test_import_anf_too_deep(depth):
    def go():
        traceir.import_anf(ANF.format(nest=nest(depth)), name="deep.trace")
    with pytest.raises(traceir.TraceIRError, match=r"deep.trace:3:78: error: tuples and "
                                                   r"lists nested deeper than 64 levels"):
        go()
    e = on_small_stack(go)
    assert isinstance(e, traceir.TraceIRError), e


def test_parse_scalar_too_deep():
    with pytest.raises(traceir.TraceIRError, match=r"g.mlir:2:88: error: .*tuples and lists "
                                                   r"nested deeper than 64 levels"):
        traceir.Module.parse(GRAPH.format(nest=nest(65)), name="g.mlir")


@pytest.mark.parametrize("depth", [300, 100000])
def test_parse_brackets_too_deep(depth):
    def go():
        traceir.Module.parse(GRAPH.format(nest=nest(depth)), name="g.mlir")
    with pytest.raises(traceir.TraceIRError, match=r"g.mlir:2:277: error: nesting deeper than "
                                                   r"256 levels of brackets"):
        go()
    e = on_small_stack(go)
    assert isinstance(e, traceir.TraceIRError), e


def test_load_too_deep(tmp_path):
    p = tmp_path / "deep.mlir"
    p.write_text(GRAPH.format(nest=nest(100000)))
    with pytest.raises(traceir.TraceIRError, match=r"deep.mlir:2:277: error: nesting deeper"):
        traceir.Module.load(str(p))
