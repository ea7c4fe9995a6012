"""unflatten and scaled_dot_product_attention against PyTorch, on the CPU
and on CUDA (the `device` fixture of conftest.py; the cuda cases skip, with
one line saying why, where trace-run finds no CUDA device): shapes, masks,
strided operands, and the errors of the registry (trace-opt) and of the
kernels (trace-run)."""
import pytest
import torch
import torch.nn.functional as F

from traceir_testing import RunError, Transposed, check_op, mlir_type, op_graph, run_graph

pytestmark = pytest.mark.usefixtures("device")

torch.manual_seed(0)

SDPA = "scaled_dot_product_attention"


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


# --- scaled_dot_product_attention ------------------------------------------

def sdpa(*args, **kw):
    return F.scaled_dot_product_attention(*args, **kw)


def test_sdpa_3d_and_4d():
    q, k, v = rnd(3, 5, 8), rnd(3, 5, 8), rnd(3, 5, 8)
    check_op(SDPA, [q, k, v], sdpa(q, k, v), rtol=1e-5, atol=1e-5)
    q, k, v = rnd(2, 4, 7, 8), rnd(2, 4, 7, 8), rnd(2, 4, 7, 8)
    check_op(SDPA, [q, k, v], sdpa(q, k, v), rtol=1e-5, atol=1e-5)
    # 2-D (no batch dims)
    check_op(SDPA, [q[0, 0], k[0, 0], v[0, 0]], sdpa(q[0, 0], k[0, 0], v[0, 0]),
             rtol=1e-5, atol=1e-5)


def test_sdpa_shapes_differ():
    # L != S and Ev != E
    q, k, v = rnd(2, 3, 4, 8), rnd(2, 3, 9, 8), rnd(2, 3, 9, 5)
    check_op(SDPA, [q, k, v], sdpa(q, k, v), rtol=1e-5, atol=1e-5)
    # batch dims broadcast
    q, k, v = rnd(1, 3, 4, 8), rnd(2, 1, 6, 8), rnd(3, 6, 5)
    check_op(SDPA, [q, k, v], sdpa(q, k, v), rtol=1e-5, atol=1e-5)


def test_sdpa_f64():
    q, k, v = (rnd(2, 5, 6, dtype=torch.float64) for _ in range(3))
    check_op(SDPA, [q, k, v], sdpa(q, k, v), rtol=1e-10, atol=1e-12)


def test_sdpa_masks():
    q, k, v = rnd(2, 3, 4, 8), rnd(2, 3, 6, 8), rnd(2, 3, 6, 5)
    m = torch.rand(2, 3, 4, 6) > 0.3
    m[..., 0] = True  # every row attends somewhere
    check_op(SDPA, [q, k, v, m], sdpa(q, k, v, attn_mask=m), rtol=1e-5, atol=1e-5)
    fm = rnd(2, 3, 4, 6)
    check_op(SDPA, [q, k, v, fm], sdpa(q, k, v, attn_mask=fm), rtol=1e-5, atol=1e-5)
    # Broadcast masks: [L, S], [1, 3, 1, S], [1, S], [3, 1, S] (PyTorch's
    # CPU kernel rejects a 1-D mask, so none here)
    for mask in (torch.rand(4, 6) > 0.5, rnd(1, 3, 1, 6), rnd(1, 6),
                 torch.rand(3, 1, 6) > 0.2):
        if mask.dtype == torch.bool:
            mask[..., -1] = True
        check_op(SDPA, [q, k, v, mask], sdpa(q, k, v, attn_mask=mask),
                 rtol=1e-5, atol=1e-5)


def test_sdpa_fully_masked_rows_are_zero():
    # PyTorch (math and CPU flash backends alike) gives 0, not NaN, for a
    # row that attends to nothing.
    q, k, v = rnd(1, 3, 4), rnd(1, 5, 4), rnd(1, 5, 6)
    m = torch.ones(3, 5, dtype=torch.bool)
    m[1] = False
    want = sdpa(q, k, v, attn_mask=m)
    assert torch.equal(want[0, 1], torch.zeros(6))
    check_op(SDPA, [q, k, v, m], want, rtol=1e-5, atol=1e-5)
    fm = torch.zeros(3, 5)
    fm[2] = float("-inf")
    want = sdpa(q, k, v, attn_mask=fm)
    assert torch.equal(want[0, 2], torch.zeros(6))
    check_op(SDPA, [q, k, v, fm], want, rtol=1e-5, atol=1e-5)


def test_sdpa_causal_and_scale():
    q, k, v = rnd(2, 2, 5, 8), rnd(2, 2, 5, 8), rnd(2, 2, 5, 8)
    check_op(SDPA, [q, k, v, None, 0.0, True], sdpa(q, k, v, is_causal=True),
             rtol=1e-5, atol=1e-5)
    # L > S and L < S: PyTorch's causal mask is aligned top-left.
    for L, S in ((7, 3), (3, 7)):
        q, k, v = rnd(2, L, 4), rnd(2, S, 4), rnd(2, S, 4)
        check_op(SDPA, [q, k, v, None, 0.0, True], sdpa(q, k, v, is_causal=True),
                 rtol=1e-5, atol=1e-5)
    q, k, v = rnd(2, 5, 8), rnd(2, 6, 8), rnd(2, 6, 3)
    check_op(SDPA, [q, k, v, None, 0.0, False, 0.3], sdpa(q, k, v, scale=0.3),
             rtol=1e-5, atol=1e-5)
    m = rnd(5, 6)
    check_op(SDPA, [q, k, v, m, 0.0, False, 2.0, False],
             sdpa(q, k, v, attn_mask=m, scale=2.0), rtol=1e-5, atol=1e-5)


def test_sdpa_non_contiguous():
    q, k, v = rnd(2, 3, 5, 8), rnd(2, 3, 6, 8), rnd(2, 3, 6, 4)
    m = rnd(5, 6)
    check_op(SDPA, [Transposed(q), Transposed(k), Transposed(v), Transposed(m)],
             sdpa(q, k, v, attn_mask=m), rtol=1e-5, atol=1e-5)


def test_sdpa_head_split_views():
    # What TransformerEncoderLayer (and most attention code) passes: [B, L,
    # H, D] transposed to [B, H, L, D], with rows strided by H * D.
    B, L, H, D = 2, 7, 4, 8
    q, k, v = rnd(B, L, H, D), rnd(B, L, H, D), rnd(B, L, H, D)
    t = mlir_type(q)
    th = mlir_type(q.transpose(1, 2))
    args = ", ".join(f'%{n}: {t} {{trace.input = "{n}"}}' for n in "qkv")
    body = "\n".join(f'  %{n}t = pyop "transpose"(%{n}, 1, 2) : ({t}) -> {th}' for n in "qkv")
    text = f"""trace.graph @g({args}) -> ({th}) {{
{body}
  %r = pyop "{SDPA}"(%qt, %kt, %vt, None, 0.0, True) : ({th}, {th}, {th}) -> {th}
  ret %r : {th}
}}
"""
    outs, report = run_graph(text, {"q": q, "k": k, "v": v})
    want = sdpa(q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True)
    torch.testing.assert_close(outs[0], want, rtol=1e-5, atol=1e-5)
    dev = report["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report


@pytest.mark.parametrize("args,result,match", [
    # registry (trace-opt)
    ([rnd(2, 3, 4), rnd(2, 5, 3), rnd(2, 5, 4)], rnd(2, 3, 4),
     r"query \[2, 3, 4\] and key \[2, 5, 3\] must have the same embedding size"),
    ([rnd(2, 3, 4), rnd(2, 5, 4), rnd(2, 6, 4)], rnd(2, 3, 4),
     r"key \[2, 5, 4\] and value \[2, 6, 4\] must have the same sequence length"),
    ([rnd(4), rnd(5, 4), rnd(5, 4)], rnd(4), r"must have rank >= 2"),
    ([rnd(2, 3, 4), rnd(3, 5, 4), rnd(3, 5, 4)], rnd(2, 3, 4), r"cannot be broadcast"),
    ([rnd(2, 3, 4), rnd(2, 5, 4).double(), rnd(2, 5, 4)], rnd(2, 3, 4),
     r"query, key and value must have the same dtype"),
    ([rnd(3, 4).long(), rnd(5, 4).long(), rnd(5, 4).long()], rnd(3, 4).long(),
     r"must be floating point"),
    ([rnd(3, 4), rnd(5, 4), rnd(5, 4), torch.ones(3, 5, dtype=torch.int64)], rnd(3, 4),
     r"attn_mask must be bool or have the query's dtype f32, got i64"),
    ([rnd(3, 4), rnd(5, 4), rnd(5, 4), rnd(4, 5)], rnd(3, 4), r"cannot be broadcast"),
    ([rnd(3, 4), rnd(5, 4), rnd(5, 4), rnd(2, 3, 5)], rnd(3, 4),
     r"attn_mask \[2, 3, 5\] does not broadcast to the attention scores \[3, 5\]"),
    ([rnd(3, 4), rnd(5, 4), rnd(5, 4), torch.ones(3, 5, dtype=torch.bool), 0.0, True],
     rnd(3, 4), r"attn_mask must not be set when is_causal=True"),
    ([rnd(3, 4), rnd(5, 4), rnd(5, 4), None, 1.5], rnd(3, 4), r"dropout_p must be in \[0, 1\]"),
    # kernel (trace-run)
    ([rnd(3, 4), rnd(5, 4), rnd(5, 4), None, 0.5], rnd(3, 4),
     r"scaled_dot_product_attention.*dropout_p = 0.5.* is not supported"),
    ([rnd(3, 4), rnd(5, 4), rnd(5, 4), None, 0.0, False, None, True], rnd(3, 4),
     r"scaled_dot_product_attention.*enable_gqa=True is not supported"),
])
def test_sdpa_errors(args, result, match):
    expect_error(SDPA, args, result, match)
