"""The lstm and gru kernels (lib/Runtime/CPU, CUDA/RNN.cpp/.cu) against
torch.nn.LSTM and torch.nn.GRU, on the CPU and on CUDA (the `device`
fixture of conftest.py; the cuda cases skip, with one line saying why,
where trace-run finds no CUDA device).

The PyOps are lstm(input, h0, c0, weights..., has_biases, num_layers,
dropout, train, bidirectional, batch_first) -> (output, h_n, c_n), ATen's
lstm.input, and gru(input, h0, weights..., ...) -> (output, h_n), ATen's
gru.input, with the weights in the modules' _flat_weights order.

Inter-layer dropout in training draws its masks from the run's --seed (on
CUDA with Philox, on the device), so training runs are compared for
determinism and for the statistics of the mask, not for PyTorch's masks. On
CUDA only: sizes with several blocks per cell-kernel launch.

Tolerances: f32 rtol=1e-4, atol=1e-5 (the larger CUDA GRU: 1e-3/1e-4, its
gemms sum in another order); f64 rtol=1e-10, atol=1e-12 (the dropout mask's
kept values: rtol=1e-12).
"""
import pytest
import torch

from traceir_testing import (RunError, Sliced, Transposed, check_op, op_graph,
                             reported_device, run_graph)

pytestmark = pytest.mark.usefixtures("device")

TOL = {torch.float32: dict(rtol=1e-4, atol=1e-5),
       torch.float64: dict(rtol=1e-10, atol=1e-12)}

CELLS = {"lstm": torch.nn.LSTM, "gru": torch.nn.GRU}


def make_rnn(input_size, hidden, layers, bias=True, bidirectional=False,
             batch_first=False, dropout=0.0, dtype=torch.float32, seed=0, cell="lstm"):
    torch.manual_seed(seed)
    return CELLS[cell](input_size, hidden, layers, bias=bias,
                       bidirectional=bidirectional, batch_first=batch_first,
                       dropout=dropout).to(dtype)


def make_lstm(*args, **kwargs):
    return make_rnn(*args, cell="lstm", **kwargs)


def op_name(m):
    return "lstm" if isinstance(m, torch.nn.LSTM) else "gru"


def inputs_for(m, seq, batch, dtype, seed=1):
    """x, h0 and (for an LSTM) c0."""
    g = torch.Generator().manual_seed(seed)
    dirs = 2 if m.bidirectional else 1
    shape = (batch, seq, m.input_size) if m.batch_first else (seq, batch, m.input_size)
    x = torch.randn(shape, generator=g, dtype=dtype)
    states = [torch.randn(m.num_layers * dirs, batch, m.hidden_size, generator=g, dtype=dtype)
              for _ in range(2 if op_name(m) == "lstm" else 1)]
    return (x, *states)


def rnn_args(m, x, *states, train=False, dropout=None):
    """The PyOp's argument list for module `m` (its weights, copied)."""
    weights = [w.detach().clone() for w in m._flat_weights]
    p = m.dropout if dropout is None else dropout
    return [x, *states, *weights, m.bias, m.num_layers, float(p), train,
            m.bidirectional, m.batch_first]


lstm_args = rnn_args


def reference(m, x, *states):
    with torch.no_grad():
        if op_name(m) == "gru":
            out, hn = m(x, states[0])
            return [out, hn]
        out, (hn, cn) = m(x, tuple(states))
    return [out, hn, cn]


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["tbf", "btf"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("cell", CELLS)
def test_rnn_matches_torch(cell, layers, bias, bidirectional, batch_first, dtype):
    # input_size != hidden, so layer 1's w_ih ([GH, D*H]) differs from layer
    # 0's ([GH, input_size]).
    m = make_rnn(5, 4, layers, bias=bias, bidirectional=bidirectional,
                 batch_first=batch_first, dtype=dtype, cell=cell).eval()
    xs = inputs_for(m, seq=6, batch=3, dtype=dtype)
    check_op(cell, rnn_args(m, *xs), reference(m, *xs), **TOL[dtype])


@pytest.mark.parametrize("cell", CELLS)
def test_rnn_three_layers_bidirectional_batch_first(cell):
    m = make_rnn(7, 6, 3, bidirectional=True, batch_first=True, cell=cell).eval()
    xs = inputs_for(m, seq=9, batch=2, dtype=torch.float32)
    check_op(cell, rnn_args(m, *xs), reference(m, *xs), **TOL[torch.float32])


@pytest.mark.parametrize("cell", CELLS)
def test_rnn_single_step_and_single_batch(cell):
    m = make_rnn(3, 2, 2, bidirectional=True, dtype=torch.float64, cell=cell).eval()
    xs = inputs_for(m, seq=1, batch=1, dtype=torch.float64)
    check_op(cell, rnn_args(m, *xs), reference(m, *xs), **TOL[torch.float64])


@pytest.mark.parametrize("cell", CELLS)
def test_rnn_empty_sequence_returns_initial_states(cell):
    m = make_rnn(3, 2, 2, bidirectional=True, cell=cell).eval()
    xs = inputs_for(m, seq=0, batch=2, dtype=torch.float32)
    check_op(cell, rnn_args(m, *xs), [torch.zeros(0, 2, 4), *xs[1:]])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("cell", CELLS)
def test_rnn_non_contiguous_arguments(cell, dtype):
    # The input transposed in storage (batch_first, so its last two dims
    # are [seq, features]), the states strided in dim 0, and layer 1's
    # weights transposed in storage.
    m = make_rnn(5, 4, 2, bidirectional=True, batch_first=True, dtype=dtype,
                 cell=cell).eval()
    xs = inputs_for(m, seq=6, batch=3, dtype=dtype)
    args = rnn_args(m, *xs)
    args[0] = Transposed(xs[0])
    for i in range(1, len(xs)):
        args[i] = Sliced(xs[i])
    first = len(xs) + 8  # layer 1 forward: w_ih, w_hh
    for i in range(first, first + 2):
        args[i] = Transposed(args[i])
    want = reference(m, *xs)
    check_op(cell, args, want, **TOL[dtype])
    # And a strided bias: layer 0 forward's b_ih.
    args[len(xs) + 2] = Sliced(args[len(xs) + 2])
    check_op(cell, args, want, **TOL[dtype])


@pytest.mark.devices("cuda")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["tbf", "btf"])
def test_lstm_larger(batch_first, dtype):
    # Several blocks per cell-kernel launch (batch * hidden = 1152) and
    # gemms of a realistic size.
    m = make_lstm(40, 96, 2, bidirectional=True, batch_first=batch_first, dtype=dtype).eval()
    xs = inputs_for(m, seq=25, batch=12, dtype=dtype)
    check_op("lstm", rnn_args(m, *xs), reference(m, *xs), **TOL[dtype])


@pytest.mark.devices("cuda")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_gru_larger_non_contiguous(dtype):
    # Sizes past one block of the gate kernel; the input transposed in
    # storage, h0 strided and layer 1's weights transposed.
    m = make_rnn(40, 96, 2, bidirectional=True, batch_first=True, dtype=dtype,
                 cell="gru").eval()
    xs = inputs_for(m, seq=25, batch=12, dtype=dtype)
    args = rnn_args(m, *xs)
    args[0] = Transposed(xs[0])
    args[1] = Sliced(xs[1])
    for i in range(2 + 8, 2 + 8 + 2):
        args[i] = Transposed(args[i])
    tol = dict(rtol=1e-3, atol=1e-4) if dtype == torch.float32 else TOL[dtype]
    check_op("gru", args, reference(m, *xs), **tol)


@pytest.mark.parametrize("cell", CELLS)
def test_rnn_eval_ignores_dropout(cell):
    # dropout > 0 but train=False: exactly the module in eval mode.
    m = make_rnn(5, 4, 2, dropout=0.5, cell=cell).eval()
    xs = inputs_for(m, seq=6, batch=3, dtype=torch.float32)
    check_op(cell, rnn_args(m, *xs, train=False), reference(m, *xs),
             **TOL[torch.float32])


def run_rnn(op, args, expected, seed=0):
    text, inputs = op_graph(op, args, expected)
    outputs, report = run_graph(text, inputs, seed=seed)
    dev = report["devices"][0]
    assert dev["device"] == reported_device(), report
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report
    return outputs


def run_lstm(args, expected, seed=0):
    return run_rnn("lstm", args, expected, seed)


@pytest.mark.parametrize("cell", CELLS)
def test_rnn_training_dropout_uses_seed(cell):
    m = make_rnn(5, 4, 3, dropout=0.5, cell=cell)
    xs = inputs_for(m, seq=6, batch=3, dtype=torch.float32)
    evald = reference(m.eval(), *xs)
    args = rnn_args(m, *xs, train=True)
    a = run_rnn(cell, args, evald, seed=7)
    b = run_rnn(cell, args, evald, seed=7)
    c = run_rnn(cell, args, evald, seed=8)
    for u, v in zip(a, b):
        assert torch.equal(u, v)
    # A different seed draws different masks: layer 1 and 2's states and
    # the output change.
    assert not torch.equal(a[0], c[0])
    assert not torch.equal(a[1][1:], c[1][1:])
    # Dropout sits between layers only: layer 0's final states are those of
    # eval mode, the others are not.
    for got, want in zip(a[1:], evald[1:]):
        torch.testing.assert_close(got[0], want[0], **TOL[torch.float32])
        assert not torch.allclose(got[1:], want[1:])
    # The same module with a dropout of 0 in training is eval mode.
    for u, v in zip(run_rnn(cell, rnn_args(m, *xs, train=True, dropout=0.0), evald), evald):
        torch.testing.assert_close(u, v, **TOL[torch.float32])


@pytest.mark.parametrize("cell", CELLS)
def test_rnn_training_without_dropout_equals_eval(cell):
    m = make_rnn(5, 4, 2, bidirectional=True, cell=cell)
    xs = inputs_for(m, seq=6, batch=3, dtype=torch.float32)
    evald = reference(m.eval(), *xs)
    for seed in (0, 3):
        got = run_rnn(cell, rnn_args(m, *xs, train=True, dropout=0.0), evald, seed=seed)
        for u, v in zip(got, evald):
            torch.testing.assert_close(u, v, **TOL[torch.float32])


@pytest.mark.filterwarnings("ignore:dropout option adds dropout")
@pytest.mark.parametrize("cell", CELLS)
def test_rnn_training_one_layer_has_no_dropout(cell):
    # With one layer there is no "between layers": dropout never applies,
    # as in nn.LSTM and nn.GRU.
    m = make_rnn(5, 4, 1, dropout=0.5, cell=cell)
    xs = inputs_for(m, seq=6, batch=3, dtype=torch.float32)
    evald = reference(m.eval(), *xs)
    got = run_rnn(cell, rnn_args(m, *xs, train=True), evald, seed=5)
    for u, v in zip(got, evald):
        torch.testing.assert_close(u, v, **TOL[torch.float32])


@pytest.mark.parametrize("cell", CELLS)
def test_rnn_training_dropout_one_matches_torch(cell):
    # p = 1 zeroes every input to the layers above the first, which PyTorch
    # does deterministically in training mode too.
    m = make_rnn(5, 4, 2, bidirectional=True, dropout=1.0, dtype=torch.float64, cell=cell)
    xs = inputs_for(m, seq=6, batch=3, dtype=torch.float64)
    want = reference(m.train(), *xs)
    got = run_rnn(cell, rnn_args(m, *xs, train=True), want, seed=1)
    for u, v in zip(got, want):
        torch.testing.assert_close(u, v, **TOL[torch.float64])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_lstm_training_dropout_scales_kept_values(dtype):
    # The mask itself: layer 0 saturates so that every output is tanh(1);
    # layer 1 passes its (dropped) input linearly into its cell, so c_n of
    # layer 1 tells which inputs were zeroed and that the kept ones were
    # scaled by 1 / (1 - p).
    hidden, batch, p = 64, 64, 0.25
    # Layer 0: i = o = sigmoid(50) = 1, g = tanh(50) = 1, f = 0.5 with
    # c0 = 0: c = 1 and h = tanh(1) everywhere.
    x = torch.full((1, batch, hidden), 50.0, dtype=dtype)
    w_ih0 = torch.zeros(4 * hidden, hidden, dtype=dtype)
    for gate in (0, 2, 3):  # i, g, o saturate; f stays 0.5 (c0 = 0)
        w_ih0[gate * hidden:(gate + 1) * hidden] = torch.eye(hidden, dtype=dtype)
    # Layer 1: only the cell gate g sees the input, linearly in the small
    # range: g = tanh(0.01 * in), i = o = sigmoid(0) = 0.5.
    w_ih1 = torch.zeros(4 * hidden, hidden, dtype=dtype)
    w_ih1[2 * hidden:3 * hidden] = 0.01 * torch.eye(hidden, dtype=dtype)
    w_hh = torch.zeros(4 * hidden, hidden, dtype=dtype)
    h0 = torch.zeros(2, batch, hidden, dtype=dtype)
    args = [x, h0, h0.clone(), w_ih0, w_hh, w_ih1, w_hh.clone(), False, 2, p, True, False, False]
    shapes = [torch.zeros(1, batch, hidden, dtype=dtype), h0, h0]
    # Layer 1's cell: c = 0.5 * tanh(0.01 * d), d the dropped layer-0
    # output: 0 or tanh(1) / (1 - p).
    tanh1 = torch.tanh(torch.tensor(1.0, dtype=torch.float64))
    kept = (0.5 * torch.tanh(0.01 * tanh1 / (1 - p))).to(dtype)
    # f64: exact up to a few roundings.
    tol = dict(rtol=1e-12, atol=0) if dtype == torch.float64 else TOL[dtype]
    masks = []
    for seed in (11, 12):
        out, hn, cn = run_lstm(args, shapes, seed=seed)
        torch.testing.assert_close(hn[0], torch.full_like(hn[0], tanh1.item()), **TOL[dtype])
        c1 = cn[1]
        is_kept = torch.isclose(c1, kept.expand_as(c1), **tol)
        is_dropped = c1 == 0
        assert bool((is_kept | is_dropped).all()), (c1[~(is_kept | is_dropped)][:5].tolist(),
                                                    kept.item())
        frac = is_dropped.double().mean().item()
        assert 0.2 < frac < 0.3, frac  # 4096 draws of p = 0.25
        masks.append(is_dropped)
    assert not torch.equal(masks[0], masks[1])  # the seed draws the mask


def test_lstm_rejects_bad_layer_weight():
    # The registry checks layer 0's w_ih only; the kernel checks the rest.
    m = make_lstm(5, 4, 2).eval()
    x, h0, c0 = inputs_for(m, seq=6, batch=3, dtype=torch.float32)
    args = lstm_args(m, x, h0, c0)
    args[3 + 4] = torch.zeros(16, 5)  # layer 1's w_ih must be [16, 4]
    text, inputs = op_graph("lstm", args, reference(m, x, h0, c0))
    with pytest.raises(RunError, match=r"w_ih of layer 1 must be \[16, 4\], got \[16, 5\]"):
        run_graph(text, inputs)


@pytest.mark.parametrize("case, error", [
    ("layer 1 w_ih", r"w_ih of layer 1 must be \[12, 4\], got \[12, 5\]"),
    ("hidden size", r"w_ih of layer 0 must be \[15, 5\], got \[12, 5\]"),
    ("weight count", r"expects 8 weight tensors for num_layers=2, got 7"),
    ("state batch", r"h0 must be \[2, 3, H\], got \[2, 2, 4\]"),
])
def test_gru_rejects_bad_shapes(case, error):
    # A 2-layer GRU(5, 4): 3 gates, so layer 0's w_ih is [12, 5] and layer
    # 1's [12, 4]; each bad call is refused with a message naming the part.
    m = make_rnn(5, 4, 2, cell="gru").eval()
    xs = inputs_for(m, seq=6, batch=3, dtype=torch.float32)
    args, results = rnn_args(m, *xs), reference(m, *xs)
    if case == "layer 1 w_ih":
        args[2 + 4] = torch.zeros(12, 5)
    elif case == "hidden size":  # h0 says H = 5, the weights H = 4
        args[1] = torch.zeros(2, 3, 5)
        results = [torch.zeros(6, 3, 5), args[1]]
    elif case == "weight count":
        del args[2 + 7]
    else:
        args[1] = torch.zeros(2, 2, 4)
        results = [results[0], args[1]]
    text, inputs = op_graph("gru", args, results)
    with pytest.raises(RunError, match=error):
        run_graph(text, inputs)


@pytest.mark.devices("cpu")
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=str)
@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_rnn_optimized_tier(cell, dtype):
    """The optimized tier's vectorized cell updates (CPU/Optimized/
    Recurrent.cpp) against eager and the portable tier, with a hidden size
    that leaves a tail after the vector loop."""
    from test_optimized_norms import check

    class Flat(torch.nn.Module):  # (output, h_n[, c_n]): flat, as check compares
        def __init__(self):
            super().__init__()
            self.rnn = make_rnn(24, 20, 2, bidirectional=True, dtype=dtype, cell=cell).eval()

        def forward(self, x):
            out, state = self.rnn(x)
            return (out, *state) if isinstance(state, tuple) else (out, state)

    check(None, (torch.randn(7, 3, 24, dtype=dtype),), dtype, cell, module=Flat())
