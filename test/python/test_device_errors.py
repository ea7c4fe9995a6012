"""Errors a kernel finds in its data (issue 16; Runtime/DeviceError.h): an
index out of range in embedding, index_select, gather, scatter_add,
embedding_dense_backward, max_pool2d_with_indices_backward and
_embedding_bag, a class target out of bounds in nll_loss, an integer
division by zero. On every device the run fails naming the op, in the CPU's
words, and the same executable then runs good inputs: on CUDA the error is
recorded on the device without a wait and read once at the run's end, so
what this proves there is that the record names the right op and value and
is cleared for the next run. Recording a GPU bundle, each failing run is an
error case whose message the GPU must give, followed by the good run on the
same executable (bundle_record.expect_recovery, run_cases.py)."""
import re

import pytest
import torch
import torch.nn.functional as F

import bundle_record
import traceir
import traceir_testing
from traceir_testing import RunError, op_graph, run_graph

pytestmark = pytest.mark.usefixtures("device")
aten = torch.ops.aten


def _rnd(*shape):
    return torch.randn(*shape, generator=torch.Generator().manual_seed(16))


def _embedding():
    w = _rnd(10, 4)
    good = torch.tensor([0, 3, 9, 1])
    # The first bad index in row-major order is the one named.
    return ("embedding", [w, torch.tensor([0, 12, 10, -5])], [w, good],
            F.embedding(good, w), "index 12 is out of range for 10 embeddings")


def _index_select():
    x = _rnd(4, 5)
    good = torch.tensor([0, 4, 2])
    return ("index_select", [x, 1, torch.tensor([0, 5, 7])], [x, 1, good],
            torch.index_select(x, 1, good),
            "index 5 is out of bounds for dimension 1 with size 5")


def _gather():
    x = _rnd(3, 5)
    good = torch.tensor([[0, 1], [4, 2], [3, 3]])
    return ("gather", [x, 1, torch.tensor([[0, 1], [4, 6], [3, 5]])], [x, 1, good],
            torch.gather(x, 1, good),
            "index 6 is out of bounds for dimension 1 with size 5")


def _scatter_add():
    x, src = torch.zeros(3, 5), _rnd(3, 2)
    good = torch.tensor([[0, 1], [4, 4], [3, 2]])
    return ("scatter_add", [x, 1, torch.tensor([[0, 1], [-9, 4], [3, 2]]), src],
            [x, 1, good, src], torch.scatter_add(x, 1, good, src),
            "index -9 is out of bounds for dimension 1 with size 5")


def _nll_loss():
    x = torch.log_softmax(_rnd(4, 5), 1)
    good = torch.tensor([1, 4, 2, 0])
    return ("nll_loss", [x, torch.tensor([1, 7, 2, 0])], [x, good],
            F.nll_loss(x, good), "Target 7 is out of bounds.")


def _integer_division():
    a = torch.tensor([4, -7, 9])
    good = torch.tensor([2, 2, 4])
    return ("div", [a, torch.tensor([2, 0, 4]), "floor"], [a, good, "floor"],
            torch.div(a, good, rounding_mode="floor"), "integer division by zero")


def _embedding_dense_backward():
    g = _rnd(4, 6)
    good = torch.tensor([0, 4, 2, 1])
    return ("embedding_dense_backward", [g, torch.tensor([0, 5, 2, 1]), 5, -1, False],
            [g, good, 5, -1, False], aten.embedding_dense_backward(g, good, 5, -1, False),
            "index 5 is out of range for num_weights=5")


def _max_pool2d_with_indices_backward():
    x = _rnd(1, 2, 4, 4)
    _, good = F.max_pool2d(x, 2, return_indices=True)
    g = _rnd(1, 2, 2, 2)
    bad = good.clone()
    bad[0, 1, 1, 0] = 16  # a plane of 4 x 4 has positions 0 to 15
    pool = [[2, 2], [2, 2], [0, 0], [1, 1], False]
    return ("max_pool2d_with_indices_backward", [g, x, *pool, bad], [g, x, *pool, good],
            aten.max_pool2d_with_indices_backward(g, x, *pool, good),
            "max_pool2d_with_indices_backward: index 16 is out of range for an input "
            "plane of 16 elements")


def _embedding_bag():
    w = _rnd(10, 3)
    offsets = torch.tensor([0, 2, 4])
    good = torch.tensor([3, 1, 9, 1, 5, 0])
    want = list(aten._embedding_bag(w, good, offsets, False, 0))
    return ("_embedding_bag", [w, torch.tensor([3, 1, 10, 1, 5, 0]), offsets, False, 0],
            [w, good, offsets, False, 0], want,
            "_embedding_bag: index 10 at position 2 is out of range for a weight of 10 rows")


CASES = [_embedding, _index_select, _gather, _scatter_add, _nll_loss, _integer_division,
         _embedding_dense_backward, _max_pool2d_with_indices_backward, _embedding_bag]


def _outputs(out):
    return list(out) if isinstance(out, (list, tuple)) else [out]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.__name__.lstrip("_"))
def test_error_names_the_op_and_the_next_run_succeeds(case, device):
    op, bad, good, want, message = case()
    want = _outputs(want)
    text, bad_inputs = op_graph(op, bad, want)
    good_text, good_inputs = op_graph(op, good, want)
    assert good_text == text  # one executable for both
    pattern = f"op '{re.escape(op)}'.*: {re.escape(message)}"
    # Through trace-run (a GPU bundle's error case, with the good run after it).
    bundle_record.expect_recovery(good_inputs, want)
    try:
        with pytest.raises(RunError, match=pattern):
            run_graph(text, bad_inputs)
    finally:
        bundle_record.expect_recovery(None, None)
    # One executable, a failing run, then a good one: the error does not
    # outlive its run.
    compiled = traceir.compile(traceir.Module.parse(text), device=traceir_testing.DEVICE)
    with pytest.raises(Exception, match=pattern):
        compiled(**bad_inputs)
    for _ in range(2):
        got = _outputs(compiled(**good_inputs))
        assert len(got) == len(want)
        for g, w in zip(got, want):
            g = g if isinstance(g, torch.Tensor) else torch.from_numpy(g)
            torch.testing.assert_close(g.cpu(), w, rtol=1e-5, atol=1e-6, check_dtype=False)
