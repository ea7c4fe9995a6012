"""The CUDA lstm and gru kernels (lib/Runtime/CUDA/RNN.cpp, RNN.cu) against
torch.nn.LSTM and torch.nn.GRU, and the word language models (the bundled
examples/word_lm.trace, and test_graphs.py's GRU variant) run on cuda. Skipped, with one line saying why, where trace-run finds no
CUDA device; scripts/gpu-check.sh runs it on a GPU.

Inter-layer dropout in training draws its masks on the device (Philox, seeded
from --seed), so training runs are compared for determinism and for the
statistics of the mask, not for the CPU's masks.
"""
import os
import re
import subprocess
import sys
import tempfile

import pytest
import torch

from traceir_testing import (BIN, ROOT, RunError, Sliced, Transposed, check_op,
                             cuda_status, op_graph, run_graph)

# test_rnn.py's helpers cover both cells (lstm's own below predate them).
from test_rnn import inputs_for as rnn_inputs, make_rnn, rnn_args  # noqa: E402
from test_rnn import reference as rnn_reference  # noqa: E402

AVAILABLE, REASON = cuda_status()
if not AVAILABLE:
    pytest.skip(f"CUDA tier skipped: {REASON}", allow_module_level=True)

TOL = {torch.float32: dict(rtol=1e-4, atol=1e-5),
       torch.float64: dict(rtol=1e-10, atol=1e-12)}


def make_lstm(input_size, hidden, layers, bias=True, bidirectional=False,
              batch_first=False, dropout=0.0, dtype=torch.float32, seed=0):
    torch.manual_seed(seed)
    return torch.nn.LSTM(input_size, hidden, layers, bias=bias,
                         bidirectional=bidirectional, batch_first=batch_first,
                         dropout=dropout).to(dtype)


def inputs_for(m, seq, batch, dtype, seed=1):
    g = torch.Generator().manual_seed(seed)
    dirs = 2 if m.bidirectional else 1
    shape = (batch, seq, m.input_size) if m.batch_first else (seq, batch, m.input_size)
    x = torch.randn(shape, generator=g, dtype=dtype)
    h0 = torch.randn(m.num_layers * dirs, batch, m.hidden_size, generator=g, dtype=dtype)
    c0 = torch.randn(m.num_layers * dirs, batch, m.hidden_size, generator=g, dtype=dtype)
    return x, h0, c0


def lstm_args(m, x, h0, c0, train=False, dropout=None):
    """The PyOp's argument list for module `m` (its weights, copied)."""
    weights = [w.detach().clone() for w in m._flat_weights]
    p = m.dropout if dropout is None else dropout
    return [x, h0, c0, *weights, m.bias, m.num_layers, float(p), train,
            m.bidirectional, m.batch_first]


def reference(m, x, h0, c0):
    with torch.no_grad():
        out, (hn, cn) = m(x, (h0, c0))
    return [out, hn, cn]


def check_lstm(args, expected, dtype):
    check_op("lstm", args, expected, device="cuda", **TOL[dtype])


def run_lstm(args, expected, seed=0, op="lstm"):
    text, inputs = op_graph(op, args, expected)
    outputs, report = run_graph(text, inputs, device="cuda", seed=seed)
    dev = report["devices"][0]
    assert dev["device"] == "cuda:0"
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report
    return outputs


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["tbf", "btf"])
@pytest.mark.parametrize("bidirectional", [False, True], ids=["uni", "bi"])
@pytest.mark.parametrize("bias", [True, False], ids=["bias", "nobias"])
@pytest.mark.parametrize("layers", [1, 2])
@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_cuda_rnn_matches_torch(cell, layers, bias, bidirectional, batch_first, dtype):
    # input_size != hidden, so layer 1's w_ih ([GH, D*H]) differs from layer
    # 0's ([GH, input_size]).
    m = make_rnn(5, 4, layers, bias=bias, bidirectional=bidirectional,
                 batch_first=batch_first, dtype=dtype, cell=cell).eval()
    xs = rnn_inputs(m, seq=6, batch=3, dtype=dtype)
    check_op(cell, rnn_args(m, *xs), rnn_reference(m, *xs), device="cuda", **TOL[dtype])


def test_cuda_lstm_three_layers_bidirectional_batch_first():
    m = make_lstm(7, 6, 3, bidirectional=True, batch_first=True).eval()
    x, h0, c0 = inputs_for(m, seq=9, batch=2, dtype=torch.float32)
    check_lstm(lstm_args(m, x, h0, c0), reference(m, x, h0, c0), torch.float32)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("batch_first", [False, True], ids=["tbf", "btf"])
def test_cuda_lstm_larger(batch_first, dtype):
    # Several blocks per cell-kernel launch (batch * hidden = 1152) and
    # gemms of a realistic size.
    m = make_lstm(40, 96, 2, bidirectional=True, batch_first=batch_first,
                  dtype=dtype).eval()
    x, h0, c0 = inputs_for(m, seq=25, batch=12, dtype=dtype)
    check_lstm(lstm_args(m, x, h0, c0), reference(m, x, h0, c0), dtype)


def test_cuda_lstm_single_step_and_single_batch():
    m = make_lstm(3, 2, 2, bidirectional=True, dtype=torch.float64).eval()
    x, h0, c0 = inputs_for(m, seq=1, batch=1, dtype=torch.float64)
    check_lstm(lstm_args(m, x, h0, c0), reference(m, x, h0, c0), torch.float64)


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_cuda_lstm_non_contiguous_arguments(dtype):
    # The input transposed in storage (batch_first, so its last two dims
    # are [seq, features]), h0 and c0 strided in dim 0, layer 1's weights
    # transposed in storage and a bias strided: all gathered on the device.
    m = make_lstm(5, 4, 2, bidirectional=True, batch_first=True, dtype=dtype).eval()
    x, h0, c0 = inputs_for(m, seq=6, batch=3, dtype=dtype)
    args = lstm_args(m, x, h0, c0)
    args[0] = Transposed(x)
    args[1] = Sliced(h0)
    args[2] = Sliced(c0)
    for i in range(3 + 8, 3 + 8 + 2):  # layer 1 forward: w_ih, w_hh
        args[i] = Transposed(args[i])
    args[3 + 2] = Sliced(args[3 + 2])  # layer 0 forward: b_ih
    check_lstm(args, reference(m, x, h0, c0), dtype)


def test_cuda_lstm_eval_ignores_dropout():
    # dropout > 0 but train=False: exactly nn.LSTM in eval mode.
    m = make_lstm(5, 4, 2, dropout=0.5).eval()
    x, h0, c0 = inputs_for(m, seq=6, batch=3, dtype=torch.float32)
    check_lstm(lstm_args(m, x, h0, c0, train=False), reference(m, x, h0, c0),
               torch.float32)


def test_cuda_lstm_training_dropout_uses_seed():
    m = make_lstm(5, 4, 3, dropout=0.5)
    x, h0, c0 = inputs_for(m, seq=6, batch=3, dtype=torch.float32)
    evald = reference(m.eval(), x, h0, c0)
    args = lstm_args(m, x, h0, c0, train=True)
    a = run_lstm(args, evald, seed=7)
    b = run_lstm(args, evald, seed=7)
    c = run_lstm(args, evald, seed=8)
    for u, v in zip(a, b):
        assert torch.equal(u, v)
    # A different seed draws different masks: layer 1 and 2's states and
    # the output change.
    assert not torch.equal(a[0], c[0])
    assert not torch.equal(a[1][1:], c[1][1:])
    # Dropout sits between layers only: layer 0's final states are those of
    # eval mode, the others are not.
    for got, want in ((a[1], evald[1]), (a[2], evald[2])):
        torch.testing.assert_close(got[0], want[0], **TOL[torch.float32])
        assert not torch.allclose(got[1:], want[1:])


def test_cuda_lstm_training_without_dropout_equals_eval():
    m = make_lstm(5, 4, 2, bidirectional=True)
    x, h0, c0 = inputs_for(m, seq=6, batch=3, dtype=torch.float32)
    evald = reference(m.eval(), x, h0, c0)
    for seed in (0, 3):
        got = run_lstm(lstm_args(m, x, h0, c0, train=True, dropout=0.0), evald, seed=seed)
        for u, v in zip(got, evald):
            torch.testing.assert_close(u, v, **TOL[torch.float32])


@pytest.mark.filterwarnings("ignore:dropout option adds dropout")
def test_cuda_lstm_training_one_layer_has_no_dropout():
    m = make_lstm(5, 4, 1, dropout=0.5)
    x, h0, c0 = inputs_for(m, seq=6, batch=3, dtype=torch.float32)
    evald = reference(m.eval(), x, h0, c0)
    got = run_lstm(lstm_args(m, x, h0, c0, train=True), evald, seed=5)
    for u, v in zip(got, evald):
        torch.testing.assert_close(u, v, **TOL[torch.float32])


def test_cuda_lstm_training_dropout_one_matches_torch():
    # p = 1 zeroes every input to the layers above the first, which PyTorch
    # does deterministically in training mode too.
    m = make_lstm(5, 4, 2, bidirectional=True, dropout=1.0, dtype=torch.float64)
    x, h0, c0 = inputs_for(m, seq=6, batch=3, dtype=torch.float64)
    want = reference(m.train(), x, h0, c0)
    got = run_lstm(lstm_args(m, x, h0, c0, train=True), want, seed=1)
    for u, v in zip(got, want):
        torch.testing.assert_close(u, v, **TOL[torch.float64])


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_cuda_lstm_training_dropout_scales_kept_values(dtype):
    # The device's mask, read back through layer 1's cell: layer 0
    # saturates so that every output is tanh(1); layer 1 passes its
    # (dropped) input linearly into its cell, so c_n of layer 1 tells which
    # inputs were zeroed and that the kept ones were scaled by 1 / (1 - p).
    hidden, batch, p = 64, 64, 0.25
    x = torch.full((1, batch, hidden), 50.0, dtype=dtype)
    w_ih0 = torch.zeros(4 * hidden, hidden, dtype=dtype)
    for gate in (0, 2, 3):  # i, g, o saturate; f stays 0.5 (c0 = 0)
        w_ih0[gate * hidden:(gate + 1) * hidden] = torch.eye(hidden, dtype=dtype)
    w_ih1 = torch.zeros(4 * hidden, hidden, dtype=dtype)
    w_ih1[2 * hidden:3 * hidden] = 0.01 * torch.eye(hidden, dtype=dtype)
    w_hh = torch.zeros(4 * hidden, hidden, dtype=dtype)
    h0 = torch.zeros(2, batch, hidden, dtype=dtype)
    args = [x, h0, h0.clone(), w_ih0, w_hh, w_ih1, w_hh.clone(), False, 2, p, True,
            False, False]
    shapes = [torch.zeros(1, batch, hidden, dtype=dtype), h0, h0]
    masks = []
    for seed in (11, 12):
        out, hn, cn = run_lstm(args, shapes, seed=seed)
        tanh1 = torch.tanh(torch.tensor(1.0, dtype=torch.float64))
        kept = (0.5 * torch.tanh(0.01 * tanh1 / (1 - p))).to(dtype)
        torch.testing.assert_close(hn[0], torch.full_like(hn[0], tanh1.item()),
                                   **TOL[dtype])
        c1 = cn[1]
        is_kept = torch.isclose(c1, kept.expand_as(c1), **TOL[dtype])
        is_dropped = c1 == 0
        assert bool((is_kept | is_dropped).all()), c1[~(is_kept | is_dropped)][:5].tolist()
        frac = is_dropped.double().mean().item()
        assert 0.2 < frac < 0.3, frac  # 4096 draws of p = 0.25
        masks.append(is_dropped)
    assert not torch.equal(masks[0], masks[1])


def test_cuda_lstm_rejects_bad_layer_weight():
    # The registry checks layer 0's w_ih only; the kernel checks the rest.
    m = make_lstm(5, 4, 2).eval()
    x, h0, c0 = inputs_for(m, seq=6, batch=3, dtype=torch.float32)
    args = lstm_args(m, x, h0, c0)
    args[3 + 4] = torch.zeros(16, 5)  # layer 1's w_ih must be [16, 4]
    text, inputs = op_graph("lstm", args, reference(m, x, h0, c0))
    with pytest.raises(RunError, match=r"w_ih of layer 1 must be \[16, 4\], got \[16, 5\]"):
        run_graph(text, inputs, device="cuda")


# The bundled word language model (as test_word_lm.py runs it on the CPU).

sys.path.insert(0, os.path.join(ROOT, "examples"))
from word_lm_inputs import RNNModel  # noqa: E402  (the model the example runs)

TRACE = os.path.join(ROOT, "examples", "word_lm.trace")
NTOKEN, NHID, NLAYERS, BPTT, BATCH = 10000, 200, 2, 35, 20


def eval_trace_text(text):
    """The trace with its train flags turned off: Dropout's third argument
    and LSTM's last one."""
    text, n_drop = re.subn(r"(= Dropout %\w+, [^,]+, )True(, )", r"\1False\2", text)
    text, n_lstm = re.subn(r"(= LSTM .*), True$", r"\1, False", text, flags=re.M)
    assert (n_drop, n_lstm) == (2, 1), (n_drop, n_lstm)
    return text


def import_anf(text):
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "word_lm.trace")
        with open(path, "w") as f:
            f.write(text)
        proc = subprocess.run([os.path.join(BIN, "trace-translate"), "--import-anf", path],
                              check=True, capture_output=True, text=True)
        return proc.stdout


def run_word_lm(graph, inputs, params, **kwargs):
    """run_graph on cuda; skips (saying which) while the graph's other ops
    (embedding, dropout, ...) have no CUDA kernel."""
    try:
        return run_graph(graph, inputs, params, device="cuda", **kwargs)
    except RunError as e:
        missing = re.search(r"no kernel for op '(\w+)' on cuda", str(e))
        if missing and missing.group(1) != "lstm":
            pytest.skip(f"word LM on CUDA needs a CUDA kernel for {missing.group(1)}")
        raise


@pytest.fixture(scope="module")
def word_lm():
    torch.manual_seed(0)
    model = RNNModel()
    with torch.no_grad():
        model.encoder.weight.uniform_(-0.1, 0.1)
        model.decoder.weight.uniform_(-0.1, 0.1)
        model.decoder.bias.uniform_(-0.1, 0.1)
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, NTOKEN, (BPTT, BATCH), generator=g)
    h0 = 0.5 * torch.randn(NLAYERS, BATCH, NHID, generator=g)
    c0 = 0.5 * torch.randn(NLAYERS, BATCH, NHID, generator=g)
    inputs = {"tokens": tokens, "hidden.0": h0, "hidden.1": c0}
    with open(TRACE) as f:
        trace = f.read()
    return model, params, inputs, trace


def test_cuda_word_lm_eval_matches_pytorch(word_lm):
    model, params, inputs, trace = word_lm
    graph = import_anf(eval_trace_text(trace))
    model.eval()
    with torch.no_grad():
        logits, (hn, cn) = model(inputs["tokens"], (inputs["hidden.0"], inputs["hidden.1"]))
    outputs, report = run_word_lm(graph, inputs, params)
    assert len(outputs) == 3
    for got, want in zip(outputs, (logits, hn, cn)):
        assert got.dtype == want.dtype and got.shape == want.shape
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    dev = report["devices"][0]
    assert dev["device"] == "cuda:0"
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report


def test_cuda_word_lm_training_trace_is_seeded(word_lm):
    model, params, inputs, trace = word_lm
    graph = import_anf(trace)
    a, report = run_word_lm(graph, inputs, params, seed=3)
    b, _ = run_word_lm(graph, inputs, params, seed=3)
    c, _ = run_word_lm(graph, inputs, params, seed=4)
    for u, v in zip(a, b):
        assert torch.equal(u, v)
    for u, v in zip(a, c):
        assert not torch.equal(u, v)
    dev = report["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report
    model.eval()
    with torch.no_grad():
        logits, _ = model(inputs["tokens"], (inputs["hidden.0"], inputs["hidden.1"]))
    assert not torch.allclose(a[0], logits, rtol=1e-4, atol=1e-5)


#===--- gru ---------------------------------------------------------------===#


def run_gru(args, expected, seed=0):
    return run_lstm(args, expected, seed, op="gru")


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_cuda_gru_larger_non_contiguous(dtype):
    # Sizes past one block of the gate kernel; the input transposed in
    # storage, h0 strided and layer 1's weights transposed.
    m = make_rnn(40, 96, 2, bidirectional=True, batch_first=True, dtype=dtype,
                 cell="gru").eval()
    xs = rnn_inputs(m, seq=25, batch=12, dtype=dtype)
    args = rnn_args(m, *xs)
    args[0] = Transposed(xs[0])
    args[1] = Sliced(xs[1])
    for i in range(2 + 8, 2 + 8 + 2):
        args[i] = Transposed(args[i])
    tol = dict(rtol=1e-3, atol=1e-4) if dtype == torch.float32 else TOL[dtype]
    check_op("gru", args, rnn_reference(m, *xs), device="cuda", **tol)


def test_cuda_gru_training_dropout():
    # Seeded on the device; p = 0 is eval, p = 1 is PyTorch's training run.
    m = make_rnn(5, 4, 3, dropout=0.5, cell="gru")
    xs = rnn_inputs(m, seq=6, batch=3, dtype=torch.float32)
    evald = rnn_reference(m.eval(), *xs)
    args = rnn_args(m, *xs, train=True)
    a, b, c = (run_gru(args, evald, seed=s) for s in (7, 7, 8))
    for u, v in zip(a, b):
        assert torch.equal(u, v)
    assert not torch.equal(a[0], c[0])
    torch.testing.assert_close(a[1][0], evald[1][0], **TOL[torch.float32])
    assert not torch.allclose(a[1][1:], evald[1][1:])
    for u, v in zip(run_gru(rnn_args(m, *xs, train=True, dropout=0.0), evald), evald):
        torch.testing.assert_close(u, v, **TOL[torch.float32])
    m1 = make_rnn(5, 4, 2, bidirectional=True, dropout=1.0, dtype=torch.float64, cell="gru")
    xs1 = rnn_inputs(m1, seq=6, batch=3, dtype=torch.float64)
    want = rnn_reference(m1.train(), *xs1)
    for u, v in zip(run_gru(rnn_args(m1, *xs1, train=True), want, seed=1), want):
        torch.testing.assert_close(u, v, **TOL[torch.float64])


def test_cuda_word_lm_gru_eval():
    from test_graphs import word_lm_gru_case
    text, inputs, params, want = word_lm_gru_case()
    outs, report = run_graph(text, inputs, params, device="cuda")
    dev = report["devices"][0]
    assert dev["device"] == "cuda:0"
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report
    for got, w in zip(outs, want):
        torch.testing.assert_close(got, w, rtol=1e-3, atol=1e-4)
