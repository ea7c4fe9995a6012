"""unflatten against PyTorch: shapes, strided operands, and the errors of
the registry (trace-opt)."""
import pytest
import torch

from traceir_testing import RunError, Transposed, check_op, op_graph, run_graph

torch.manual_seed(0)

def rnd(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=dtype)


def expect_error(op, args, result, match):
    text, inputs = op_graph(op, args, [result])
    with pytest.raises(RunError, match=match):
        run_graph(text, inputs)


# --- unflatten --------------------------------------------------------------

def test_unflatten():
    x = rnd(2, 12, 5)
    check_op("unflatten", [x, 1, [3, 4]], x.unflatten(1, (3, 4)))
    check_op("unflatten", [x, -1, [5, 1]], x.unflatten(-1, (5, 1)))
    check_op("unflatten", [x, 0, [1, 2, 1]], x.unflatten(0, (1, 2, 1)))
    check_op("unflatten", [x, 1, [-1, 3, 2]], x.unflatten(1, (-1, 3, 2)))
    check_op("unflatten", [x, -2, (2, -1)], x.unflatten(-2, (2, -1)))
    # Non-contiguous input: a transposed tensor still unflattens as a view.
    check_op("unflatten", [Transposed(x), 1, [4, 3]], x.unflatten(1, (4, 3)))
    check_op("unflatten", [Transposed(x), -1, [-1, 5]], x.unflatten(-1, (-1, 5)))


@pytest.mark.parametrize("dim,sizes,match", [
    (3, [2, 3], r"Dimension out of range \(expected to be in range of \[-3, 2\], but got 3\)"),
    (-4, [2, 3], r"Dimension out of range"),
    (1, [4, 2], r"unflatten: Provided sizes \[4, 2\] don't multiply up to the size of dim 1 \(6\)"),
    (1, [-1, -1], r"only one dimension can be inferred"),
    (1, [-1, 4], r"don't multiply up to the size of dim 1 \(6\)"),
    (1, [-2, -3], r"invalid shape dimension -2"),
    (1, [], r"unflatten: sizes must be non-empty"),
])
def test_unflatten_errors(dim, sizes, match):
    x = rnd(2, 6, 4)
    expect_error("unflatten", [x, dim, sizes], x, match)


def test_unflatten_error_matches_pytorch():
    # The message quotes PyTorch's.
    x = rnd(2, 6, 4)
    with pytest.raises(RuntimeError) as e:
        x.unflatten(1, (4, 2))
    assert "Provided sizes [4, 2] don't multiply up to the size of dim 1 (6)" in str(e.value)
