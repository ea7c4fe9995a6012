"""Distance, embedding-bag and grid-sampling kernels against PyTorch, on the
CPU and on CUDA (the `device` fixture of conftest.py; the cuda cases skip,
with one line saying why, where trace-run finds no CUDA device):
_cdist_forward, _pdist_forward, _embedding_bag and grid_sampler_2d
(lib/Runtime/CPU/Distance.cpp, CUDA/Distance.cpp/.cu, both running the
per-element functions of Runtime/Distance.h), each against torch.ops.aten
and through traceir.from_torch against the public API (torch.cdist,
F.pdist, F.embedding_bag, F.grid_sample); their OpInfo samples run in
test_opinfo.py.

Tolerances: the distances accumulate in f64 and round once (ATen: in the
dtype, or through a matrix product for p = 2 with many rows): f32 rtol 1e-5
/ atol 1e-5, f64 1e-10 / 1e-12. The embedding bags sum in f64 and round
once (ATen: in float, then rounded): f32 1e-5 / 1e-6, f16/bf16 one rounding
step; bag sizes, offset2bag and max_indices match exactly. Grid sampling
computes coordinates and weights in ATen's precision and sums in f64.
"""
import math

import pytest
import torch
import torch.nn.functional as F

from traceir_testing import RunError, Sliced, Transposed, check_op, op_graph, run_graph

pytestmark = pytest.mark.usefixtures("device")

aten = torch.ops.aten
TOL = {torch.float32: dict(rtol=1e-5, atol=1e-5), torch.float64: dict(rtol=1e-10, atol=1e-12),
       torch.float16: dict(rtol=1e-3, atol=1e-3), torch.bfloat16: dict(rtol=8e-3, atol=8e-3)}


def rnd(*shape, dtype=torch.float32):
    return torch.randn(*shape, dtype=torch.float64).to(dtype)


def unwrap(a):
    return a.tensor if isinstance(a, (Transposed, Sliced)) else a


def check_aten(op, args, dtype=torch.float32, **tol):
    want = getattr(aten, op)(*[unwrap(a) for a in args])
    return check_op(op, args, list(want) if isinstance(want, tuple) else want,
                    **(tol or TOL[dtype]))


def check_error(op, args, likes, match):
    """Running `op` on `args` (results typed as `likes`) fails with `match`."""
    text, inputs = op_graph(op, args, likes)
    with pytest.raises(RunError, match=match):
        run_graph(text, inputs)


#===--- _cdist_forward ------------------------------------------------------===#

@pytest.mark.parametrize("p,dtype", [(0.0, torch.float32), (1.0, torch.float32),
                                     (2.0, torch.float32), (1.5, torch.float32),
                                     (math.inf, torch.float32), (2.0, torch.float64),
                                     (0.5, torch.float64)])
def test_cdist(p, dtype):
    x1, x2 = rnd(2, 4, 3, dtype=dtype), rnd(2, 5, 3, dtype=dtype)
    # Equal elements make p = 0 count something other than M.
    x2[0, 1] = x1[0, 2]
    x2[1, 0, 1] = x1[1, 3, 1]
    check_aten("_cdist_forward", [x1, x2, p, None], dtype)


def test_cdist_shapes_and_modes():
    # Broadcast batch dims, unbatched, empty and zero-column inputs.
    check_aten("_cdist_forward", [rnd(3, 1, 4, 2), rnd(2, 5, 2), 2.0, None])
    check_aten("_cdist_forward", [rnd(6, 3), rnd(4, 3), 0.5, None])
    check_aten("_cdist_forward", [rnd(0, 3), rnd(4, 3), 1.0, None])
    check_aten("_cdist_forward", [rnd(3, 0), rnd(4, 0), 2.0, None])
    # p = 2 with more than 25 rows: ATen takes the matrix-product form
    # (compute_mode None or 1), TraceIR the direct one.
    x1, x2 = rnd(30, 5), rnd(27, 5)
    for mode in (None, 2):
        check_aten("_cdist_forward", [x1, x2, 2.0, mode], rtol=1e-4, atol=1e-5)


def test_cdist_noncontiguous():
    x1, x2 = rnd(2, 4, 3), rnd(2, 5, 3)
    check_aten("_cdist_forward", [Transposed(x1), x2, 1.0, None])
    check_aten("_cdist_forward", [Sliced(x1), Transposed(x2), 3.0, 2])


def test_cdist_errors():
    x = rnd(3, 4)
    check_error("_cdist_forward", [x, rnd(2, 5), 2.0, None], [rnd(3, 2)],
                "same number of columns")
    check_error("_cdist_forward", [x, x, -1.0, None], [rnd(3, 3)], "non-negative p")
    check_error("_cdist_forward", [x, x, 2.0, 3], [rnd(3, 3)], "possible modes")
    check_error("_cdist_forward", [x.half(), x.half(), 2.0, None], [rnd(3, 3).half()],
                "f32 or f64")
    check_error("_cdist_forward", [rnd(2, 3, 4), rnd(3, 3, 4), 2.0, None], [rnd(3, 3, 3)],
                "broadcast")


#===--- _pdist_forward ------------------------------------------------------===#

@pytest.mark.parametrize("p,dtype", [(0.0, torch.float32), (1.0, torch.float32),
                                     (2.0, torch.float32), (0.7, torch.float32),
                                     (math.inf, torch.float32), (2.0, torch.float64)])
def test_pdist(p, dtype):
    x = rnd(7, 4, dtype=dtype)
    x[5] = x[2]
    check_aten("_pdist_forward", [x, p], dtype)


def test_pdist_shapes_and_strides():
    check_aten("_pdist_forward", [rnd(1, 3), 2.0])
    check_aten("_pdist_forward", [rnd(2, 5)])  # p defaults to 2
    check_aten("_pdist_forward", [rnd(40, 3), 2.0])
    check_aten("_pdist_forward", [Transposed(rnd(6, 4)), 1.0])
    check_aten("_pdist_forward", [Sliced(rnd(5, 3)), 3.0])


def test_pdist_errors():
    check_error("_pdist_forward", [rnd(2, 3, 4), 2.0], [rnd(1)], "2D")
    check_error("_pdist_forward", [rnd(3, 4), -2.0], [rnd(3)], "non-negative p")
    check_error("_pdist_forward", [rnd(3, 4).bfloat16(), 2.0], [rnd(3).bfloat16()],
                "f32 or f64")


#===--- _embedding_bag ------------------------------------------------------===#

IDX = [3, 1, 4, 1, 5, 9, 2, 6, 0, 3]
OFF = [0, 3, 3, 7]


def bag_args(dtype=torch.float32, index=torch.int64, offsets=torch.int64):
    w = rnd(10, 4, dtype=dtype)
    return w, torch.tensor(IDX, dtype=index), torch.tensor(OFF, dtype=offsets)


@pytest.mark.parametrize("mode,dtype", [(m, d) for d in (torch.float32, torch.float64)
                                        for m in (0, 1, 2)] +
                         [(0, torch.float16), (1, torch.float16), (2, torch.float16),
                          (1, torch.bfloat16)])
def test_embedding_bag(mode, dtype):
    w, i, o = bag_args(dtype)
    check_aten("_embedding_bag", [w, i, o, False, mode], dtype)


def test_embedding_bag_bf16_sum_offset2bag_as_export():
    # torch.export types _embedding_bag's results by PyTorch's meta
    # function, whose fast sum path (offset2bag left empty) takes f32 and f16
    # weights only, while eager's CPU kernel takes bf16 too. TraceIR follows
    # the declared types, so an exported bf16 bag imports: offset2bag holds
    # each index's bag, as in float64 (where eager fills it).
    w, i, o = bag_args(torch.bfloat16)
    bag = torch.nn.EmbeddingBag.from_pretrained(w, mode="sum")
    ep = torch.export.export(bag, (i, o))
    node = next(n for n in ep.graph.nodes if "embedding_bag" in str(n.target))
    assert node.meta["val"][1].shape == (len(IDX),)
    want = list(aten._embedding_bag(w, i, o, False, 0))
    want[1] = aten._embedding_bag(w.double(), i, o, False, 0)[1]
    check_op("_embedding_bag", [w, i, o, False, 0], want, **TOL[torch.bfloat16])


@pytest.mark.parametrize("mode", [0, 1, 2])
def test_embedding_bag_padding_and_last_offset(mode):
    w, i, o = bag_args()
    # padding_idx drops its rows from the bags (and from bag_size).
    check_aten("_embedding_bag", [w, i, o, False, mode, False, None, False, 1])
    # include_last_offset: the last offset ends the last bag.
    o2 = torch.tensor(OFF + [10])
    check_aten("_embedding_bag", [w, i, o2, False, mode, False, None, True, 3 if mode else -1])


def test_embedding_bag_per_sample_weights_and_index_dtypes():
    w, i, o = bag_args()
    psw = rnd(len(IDX))
    check_aten("_embedding_bag", [w, i, o, False, 0, False, psw])
    check_aten("_embedding_bag", [w, i, o, False, 0, False, psw, False, 4])
    w64, _, _ = bag_args(torch.float64)
    check_aten("_embedding_bag", [w64, i, o, False, 0, False, psw.double()], torch.float64)
    for index, offsets, mode in ((torch.int32, torch.int32, 2), (torch.int32, torch.int64, 0)):
        w, i, o = bag_args(index=index, offsets=offsets)
        check_aten("_embedding_bag", [w, i, o, False, mode])


def test_embedding_bag_noncontiguous_and_empty():
    w, i, o = bag_args()
    check_aten("_embedding_bag", [Transposed(w), Sliced(i), Sliced(o), False, 1])
    check_aten("_embedding_bag", [Sliced(w), i, o, False, 2, False, None, False, 2])
    # No indices: every bag is empty.
    e = torch.zeros(0, dtype=torch.int64)
    check_aten("_embedding_bag", [w, e, torch.tensor([0, 0]), False, 1])
    check_aten("_embedding_bag", [w, e, torch.tensor([0, 0]), False, 0])


def test_embedding_bag_errors():
    w, i, o = bag_args()
    like = list(aten._embedding_bag(w, i, o, False, 0))
    bad = torch.tensor([3, 1, 10, 1, 5, 9, 2, 6, 0, 3])
    check_error("_embedding_bag", [w, bad, o, False, 0], like,
                r"_embedding_bag: index 10 at position 2 is out of range")
    check_error("_embedding_bag", [w, -i, o, False, 0], like, "index -3 at position 0")
    check_error("_embedding_bag", [w, i, torch.tensor([1, 3, 3, 7]), False, 0], like,
                r"offsets\[0\] is 1")
    check_error("_embedding_bag", [w, i, torch.tensor([0, 3, 11, 7]), False, 0], like,
                r"offsets\[2\] is 11")
    check_error("_embedding_bag", [w, i, torch.tensor([0, 5, 3, 7]), False, 0], like,
                r"offsets\[2\] is 3")
    check_error("_embedding_bag", [w, i, o, False, 1, False, rnd(10)], like,
                "only supported with mode='sum'")
    check_error("_embedding_bag", [w, i.float(), o, False, 0], like, "i32 or i64")
    check_error("_embedding_bag", [w, i, o, False, 0, False, rnd(9)], like,
                "per_sample_weights")
    for args in ([w, bad, o, False, 0], [w, i, torch.tensor([1, 3, 3, 7]), False, 0]):
        with pytest.raises(RuntimeError):
            aten._embedding_bag(*args)


#===--- grid_sampler_2d -----------------------------------------------------===#

def grid(n, h, w, dtype=torch.float32, spread=1.2):
    # Some points outside [-1, 1], for the padding modes.
    return (torch.rand(n, h, w, 2, dtype=torch.float64) * 2 - 1).mul(spread).to(dtype)


@pytest.mark.parametrize("interp", [0, 1, 2])
@pytest.mark.parametrize("padding", [0, 1, 2])
def test_grid_sampler(interp, padding):
    align = (interp + padding) % 2 == 1
    x, g = rnd(2, 3, 5, 6), grid(2, 4, 3)
    check_aten("grid_sampler_2d", [x, g, interp, padding, align])


@pytest.mark.parametrize("dtype,interp", [(torch.float64, 0), (torch.float64, 2),
                                          (torch.float16, 0), (torch.bfloat16, 2)])
def test_grid_sampler_dtypes(dtype, interp):
    """f16 and bf16 compute in float and round once; ATen's CPU kernel
    rounds its every step to the dtype (bf16 bicubic differs from its own
    float result by up to 0.09), so they are checked against ATen's float
    result rounded once."""
    x, g = rnd(1, 2, 4, 5, dtype=dtype), grid(1, 3, 4, dtype)
    if dtype == torch.float64:
        check_aten("grid_sampler_2d", [x, g, interp, 2, False], dtype)
    else:
        want = aten.grid_sampler_2d(x.float(), g.float(), interp, 2, False).to(dtype)
        check_op("grid_sampler_2d", [x, g, interp, 2, False], want, **TOL[dtype])


def test_grid_sampler_noncontiguous_and_empty():
    x, g = rnd(2, 3, 5, 6), grid(2, 4, 3)
    check_aten("grid_sampler_2d", [Transposed(x), g, 0, 0, False])
    check_aten("grid_sampler_2d", [Sliced(x), Sliced(g), 2, 1, True])
    check_aten("grid_sampler_2d", [x, grid(2, 0, 3), 0, 0, False])
    # Far outside: zeros padding reads nothing, border the edge.
    far = torch.tensor([1e6, -1e6, -1e7, 3e6]).view(2, 1, 1, 2)
    for padding in (0, 1):
        check_aten("grid_sampler_2d", [x, far, 0, padding, False])


def test_grid_sampler_errors():
    x, g = rnd(1, 2, 4, 5), grid(1, 3, 4)
    like = [rnd(1, 2, 3, 4)]
    check_error("grid_sampler_2d", [x, g, 3, 0, False], like, "interpolation_mode")
    check_error("grid_sampler_2d", [x, g.double(), 0, 0, False], like, "one floating dtype")
    check_error("grid_sampler_2d", [rnd(1, 2, 0, 5), g, 0, 0, False], like, "non-empty spatial")


#===--- import --------------------------------------------------------------===#

def test_import_public_api():
    """from_torch keeps each op whole (no decomposition) and matches eager."""
    import traceir
    import traceir_testing

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.bag = torch.nn.EmbeddingBag(10, 4, mode="max")

        def forward(self, a, b, y, i, o, x, g):
            return (torch.cdist(a, b, p=1.0), F.pdist(y), self.bag(i, o),
                    F.embedding_bag(i, self.bag.weight, o, mode="mean"),
                    F.grid_sample(x, g, mode="bicubic", padding_mode="border",
                                  align_corners=False))

    m = M().eval()
    args = (rnd(2, 4, 3), rnd(2, 5, 3), rnd(5, 3), torch.tensor(IDX), torch.tensor(OFF),
            rnd(1, 2, 4, 5), grid(1, 3, 4))
    module = traceir.from_torch(m, args)
    text = str(module)
    for op in ("_cdist_forward", "_pdist_forward", "_embedding_bag", "grid_sampler_2d"):
        assert f'"{op}"' in text, text
    got = traceir.compile(module, device=traceir_testing.DEVICE)(*args)
    with torch.no_grad():
        want = m(*args)
    for g, w in zip(got, want):
        torch.testing.assert_close(g, w, rtol=1e-5, atol=1e-5)


def test_embedding_bag_forward_only():
    """What F.embedding_bag calls for a weight without grad: _embedding_bag's
    kernel. (With include_last_offset PyTorch's meta function and its CPU
    kernel disagree on bag_size's length; TraceIR takes the meta's, which
    from_torch records, and only the output is compared there.)"""
    import traceir
    import traceir_testing

    w, i, o = bag_args()
    for mode in (0, 2):
        want = aten._embedding_bag_forward_only(w, i, o, False, mode)
        check_op("_embedding_bag_forward_only", [w, i, o, False, mode], list(want))

    class M(torch.nn.Module):
        def forward(self, w, i, o):
            return (F.embedding_bag(i, w, o, mode="sum", include_last_offset=True),
                    F.embedding_bag(i, w, o, mode="max", include_last_offset=True,
                                    padding_idx=1))

    args = (w, i, torch.tensor(OFF + [10]))
    module = traceir.from_torch(M(), args)
    assert '"_embedding_bag_forward_only"' in str(module)
    got = traceir.compile(module, device=traceir_testing.DEVICE)(*args)
    for g, want in zip(got, M()(*args)):
        torch.testing.assert_close(g, want, rtol=1e-5, atol=1e-6)
