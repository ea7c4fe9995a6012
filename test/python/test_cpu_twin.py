"""The CPU twin: the hand-written linalg funcs lowered by --trace-lower-to-cpu
and run by trace-twin-run (ExecutionEngine, _mlir_ciface_ entry points) on
random inputs match PyTorch."""
import os
import subprocess

import pytest
import torch
from safetensors.torch import load_file, save_file

from traceir_testing import BIN, ROOT

FUNCS = os.path.join(ROOT, "test", "Conversion", "Inputs", "linalg-funcs.mlir")

CASES = {
    "add_relu": ([(64, 128), (64, 128)], lambda a, b: torch.relu(a + b)),
    "linear": ([(16, 32), (32, 24), (24,)], lambda x, w, b: x @ w + b),
    "row_sum": ([(20, 50)], lambda x: x.sum(dim=1)),
    "softmax": ([(8, 40)], lambda x: torch.softmax(x, dim=1)),
}


def twin_run(func, args, tmp_path):
    inputs, outputs = tmp_path / "in.safetensors", tmp_path / "out.safetensors"
    save_file({f"arg{i}": a.contiguous() for i, a in enumerate(args)}, str(inputs))
    subprocess.run([os.path.join(BIN, "trace-twin-run"), FUNCS, "--func", func, "--inputs", str(inputs),
                    "--outputs", str(outputs)], check=True)
    return load_file(str(outputs))


@pytest.mark.parametrize("func", sorted(CASES))
def test_matches_torch(func, tmp_path):
    shapes, reference = CASES[func]
    gen = torch.Generator().manual_seed(0)
    args = [torch.randn(s, generator=gen) * 3 for s in shapes]
    out = twin_run(func, args, tmp_path)
    assert list(out) == ["output0"]
    torch.testing.assert_close(out["output0"], reference(*args), rtol=1e-5, atol=1e-5)


def test_lowered_module_has_c_interface():
    lowered = subprocess.run([os.path.join(BIN, "trace-opt"), FUNCS, "--trace-lower-to-cpu"],
                             check=True, capture_output=True, text=True).stdout
    for func in CASES:
        assert f"llvm.func @_mlir_ciface_{func}(" in lowered


def test_wrong_input_shape_is_an_error(tmp_path):
    inputs, outputs = tmp_path / "in.safetensors", tmp_path / "out.safetensors"
    save_file({"arg0": torch.zeros(3, 3)}, str(inputs))
    run = subprocess.run([os.path.join(BIN, "trace-twin-run"), FUNCS, "--func", "row_sum", "--inputs",
                          str(inputs), "--outputs", str(outputs)], capture_output=True, text=True)
    assert run.returncode != 0
    assert "input 'arg0' does not match tensor<20x50xf32>" in run.stderr
    assert not outputs.exists()


# The twin against the runtime: the same trace.graph, the same safetensors
# files, run by trace-run (the runtime's CPU kernels) and by trace-twin-run
# (--convert-trace-to-linalg, then the CPU pipeline under ExecutionEngine).
# This is how the lowering is proven on machines without a GPU.
from test_graphs import t as ttype  # noqa: E402
from traceir_testing import op_graph, run_graph  # noqa: E402


def twin_vs_runtime(text, inputs, params, tmp_path, rtol=1e-5, atol=1e-6):
    graph = tmp_path / "g.mlir"
    graph.write_text(text)
    cmd = [os.path.join(BIN, "trace-twin-run"), str(graph), "--outputs", str(tmp_path / "twin.st")]
    for flag, tensors in (("--inputs", inputs), ("--params", params)):
        if tensors:
            path = tmp_path / (flag[2:] + ".st")
            save_file({k: v.contiguous() for k, v in tensors.items()}, str(path))
            cmd += [flag, str(path)]
    subprocess.run(cmd, check=True)
    twin = load_file(str(tmp_path / "twin.st"))
    runtime, _ = run_graph(text, inputs, params, device="cpu")
    assert len(twin) == len(runtime)
    for i, want in enumerate(runtime):
        torch.testing.assert_close(twin[f"output{i}"], want, rtol=rtol, atol=atol, equal_nan=True)
    return runtime


torch.manual_seed(0)
OPS = [
    ("add", [torch.randn(3, 4), torch.randn(4)]),
    ("sub", [torch.randn(3, 4), torch.randn(3, 1), 2]),
    ("mul", [torch.randn(2, 3), 1.5]),
    ("div", [torch.randn(2, 3), torch.rand(2, 3) + 0.5]),
    ("neg", [torch.randn(5)]), ("relu", [torch.randn(5)]), ("gelu", [torch.randn(7)]),
    ("tanh", [torch.randn(5)]), ("sigmoid", [torch.randn(5)]), ("exp", [torch.randn(5)]),
    ("log", [torch.rand(5) + 0.1]), ("sqrt", [torch.rand(5)]), ("rsqrt", [torch.rand(5) + 0.1]),
    ("pow", [torch.rand(4) + 0.1, 2.5]),
    ("hardtanh", [torch.randn(9) * 2, -0.5, 1.5]), ("hardtanh", [torch.randn(4, 3)]),
    ("hardtanh", [torch.randint(-6, 6, (8,)), -2, 3]),
    ("sin", [torch.randn(6) * 3]), ("cos", [torch.randint(-5, 5, (6,))]),
    ("atanh", [torch.rand(5) * 1.8 - 0.9]), ("asinh", [torch.randn(5) * 4]),
    ("erf", [torch.randn(7)]), ("expm1", [torch.randn(5) * 1e-3]),
    ("log1p", [torch.rand(5) * 1e-3]), ("log10", [torch.rand(5) * 100]),
    ("reciprocal", [torch.randint(1, 9, (5,))]),
    ("sign", [torch.tensor([-2.0, -0.0, 0.0, 3.0])]), ("sign", [torch.randint(-3, 3, (6,))]),
    ("round", [torch.tensor([-2.5, -1.5, -0.5, 0.5, 1.5, 2.5, 2.6])]),
    ("floor", [torch.randn(6) * 3]), ("ceil", [torch.randn(6) * 3]),
    ("trunc", [torch.randn(6) * 3]), ("trunc", [torch.randint(-9, 9, (4,))]),
    ("isnan", [torch.tensor([0.0, float("nan"), float("inf")])]),
    ("isinf", [torch.tensor([float("-inf"), float("nan"), float("inf"), 1.0])]),
    ("isinf", [torch.randint(-9, 9, (4,))]),
    ("logical_not", [torch.tensor([0.0, -0.0, 2.0, float("nan")])]),
    ("logical_not", [torch.randint(-2, 2, (6,))]),
    ("bitwise_not", [torch.randint(-9, 9, (6,))]), ("bitwise_not", [torch.rand(6) > 0.5]),
    ("leaky_relu", [torch.randn(8)]), ("leaky_relu", [torch.randn(8), 0.3]),
    ("elu", [torch.randn(8)]), ("elu", [torch.randn(8), 0.5, 2.0, 1.5]),
    ("maximum", [torch.tensor([1.0, float("nan"), -2.0]), torch.tensor([0.0, 1.0, float("nan")])]),
    ("minimum", [torch.randint(-5, 5, (3, 4)), torch.randint(-5, 5, (4,))]),
    ("maximum", [torch.rand(5) > 0.5, torch.rand(5) > 0.5]),
    ("clamp", [torch.randn(8) * 3, -1.0, 0.5]), ("clamp", [torch.randint(-9, 9, (8,)), None, 3]),
    ("clamp", [torch.tensor([float("nan"), 2.0, -5.0]), 0.5]),
    ("atan2", [torch.randn(6), torch.randn(6)]),
    ("exp2", [torch.randn(6) * 4]), ("exp2", [torch.randint(-3, 9, (5,))]),
    ("erfc", [torch.randn(7) * 3]),
    ("copysign", [torch.randn(6), torch.tensor([-0.0, 0.0, -1.0, 2.0, float("nan"), -3.0])]),
    ("fmax", [torch.tensor([1.0, float("nan"), -2.0]), torch.tensor([0.0, 1.0, float("nan")])]),
    ("fmin", [torch.tensor([1.0, float("nan"), -2.0]), torch.tensor([0.0, 1.0, float("nan")])]),
    ("fmax", [torch.randint(-9, 9, (5,)), torch.randint(-9, 9, (5,))]),
    ("bitwise_and", [torch.randint(-9, 9, (6,)), torch.randint(-9, 9, (6,))]),
    ("bitwise_or", [torch.randint(-9, 9, (6,)), 5]), ("bitwise_xor", [torch.rand(6) > 0.5, True]),
    ("logical_and", [torch.tensor([0.0, float("nan"), 2.0, 0.0]), torch.tensor([1, 1, 0, 0])]),
    ("logical_or", [torch.randn(6), torch.randint(0, 2, (6,))]),
    ("logical_xor", [torch.rand(6) > 0.5, torch.rand(6) > 0.5]),
    ("fmod", [torch.randn(8) * 5, torch.tensor(-1.5)]), ("remainder", [torch.randn(8) * 5, 1.5]),
    ("remainder", [torch.randn(8) * 5, torch.randn(8)]),
    ("copy", [torch.zeros(3, 4, dtype=torch.int32), torch.randn(4) * 9]),
    ("fill", [torch.randn(2, 3), 2.5]),
    ("hardswish", [torch.randn(9) * 4]), ("hardsigmoid", [torch.randn(9) * 4]),
    ("silu", [torch.randn(9) * 4]),
    ("sum", [torch.randn(3, 4, 5), [1], True]), ("mean", [torch.randn(3, 4), [0, 1], False]),
    ("amax", [torch.randn(3, 4), [1], False]),
    ("softmax", [torch.randn(3, 6), -1, None]), ("log_softmax", [torch.randn(3, 6), 0, None]),
    ("mm", [torch.randn(3, 4), torch.randn(4, 5)]), ("bmm", [torch.randn(2, 3, 4), torch.randn(2, 4, 5)]),
    ("matmul", [torch.randn(2, 3, 4), torch.randn(4, 5)]),
    ("linear", [torch.randn(2, 5), torch.randn(3, 5), torch.randn(3)]),
    ("addmm", [torch.randn(3), torch.randn(2, 4), torch.randn(4, 3)]),
    ("layer_norm", [torch.randn(2, 3, 4), [4], torch.randn(4), torch.randn(4), 1e-5, True]),
    ("embedding", [torch.randn(10, 4), torch.tensor([[1, 2], [9, 0]])]),
    ("transpose", [torch.randn(2, 3, 4), 0, 2]), ("permute", [torch.randn(2, 3, 4), [2, 0, 1]]),
    ("view", [torch.randn(2, 6), [3, 4]]), ("unsqueeze", [torch.randn(3, 4), 1]),
    ("select", [torch.randn(3, 4), 1, 2]), ("slice", [torch.randn(5, 4), 0, 1, 4, 1]),
    ("cat", [torch.randn(2, 3), torch.randn(2, 1), torch.randn(2, 2), 1]),
    ("eq", [torch.tensor([1., 2., 3.]), torch.tensor([1., 0., 3.])]),
    ("ne", [torch.randint(0, 3, (3, 4)), 1]), ("lt", [torch.randn(3, 4), torch.randn(4)]),
    ("le", [torch.randint(0, 3, (5,)), 1.5]), ("gt", [torch.randn(2, 3), 0]),
    ("ge", [torch.randn(3, 1), torch.randn(1, 4)]),
    ("where", [torch.randn(3, 4) > 0, torch.randn(3, 4), torch.randn(4)]),
    ("_to_copy", [torch.randn(3, 4) * 4, "torch.int64"]), ("_to_copy", [torch.randn(5), "torch.bool"]),
    ("_to_copy", [torch.randint(-3, 3, (4,)), "torch.float64"]),
    ("full", [[2, 3], -0.5]), ("full_like", [torch.randn(3, 2), 4, "torch.int64"]),
    ("conv2d", [torch.randn(2, 3, 6, 6), torch.randn(4, 3, 3, 3), torch.randn(4), 2, 1, 1, 1]),
    ("conv2d", [torch.randn(1, 4, 7, 7), torch.randn(6, 2, 3, 3), None, 1, 0, 2, 2]),
    ("max_pool2d", [torch.randn(1, 2, 6, 6), 3, 2, 1]),
    ("adaptive_avg_pool2d", [torch.randn(2, 3, 6, 4), [3, 2]]),
    ("adaptive_avg_pool2d", [torch.randn(1, 2, 5, 5), 1]),
    ("batch_norm", [torch.randn(2, 3, 4, 4), torch.randn(3), torch.randn(3), torch.randn(3),
                    torch.rand(3) + 0.5, False, 0.1, 1e-5, False]),
]


@pytest.mark.parametrize("op,args", OPS, ids=[o for o, _ in OPS])
def test_twin_matches_runtime_per_op(op, args, tmp_path):
    fn = {"sum": lambda x, d, k: x.sum(d, keepdim=k), "mean": lambda x, d, k: x.mean(d, keepdim=k),
          "amax": lambda x, d, k: x.amax(d, keepdim=k), "softmax": lambda x, d, _: torch.softmax(x, d),
          "log_softmax": lambda x, d, _: torch.log_softmax(x, d),
          "layer_norm": lambda x, s, w, b, e, _: torch.nn.functional.layer_norm(x, s, w, b, e),
          "embedding": lambda w, i: torch.nn.functional.embedding(i, w),
          "linear": torch.nn.functional.linear, "gelu": torch.nn.functional.gelu,
          "hardtanh": torch.nn.functional.hardtanh,
          "_to_copy": lambda x, d: x.to(getattr(torch, d.removeprefix("torch."))),
          "full": torch.full,
          "full_like": lambda x, v, d: torch.full_like(x, v, dtype=getattr(torch, d[6:])),
          "leaky_relu": torch.ops.aten.leaky_relu, "elu": torch.ops.aten.elu,
          "clamp": torch.ops.aten.clamp, "copy": torch.ops.aten.copy, "fill": torch.ops.aten.fill,
          "bitwise_or": torch.ops.aten.bitwise_or, "bitwise_xor": torch.ops.aten.bitwise_xor,
          "remainder": torch.ops.aten.remainder, "hardswish": torch.nn.functional.hardswish,
          "hardsigmoid": torch.nn.functional.hardsigmoid, "silu": torch.nn.functional.silu,
          "sub": lambda a, b, alpha: torch.sub(a, b, alpha=alpha),
          "slice": lambda x, d, s, e, st: x[s:e], "view": lambda x, s: x.view(s),
          "permute": lambda x, p: x.permute(p), "cat": lambda *a: torch.cat(a[:-1], a[-1]),
          "conv2d": torch.nn.functional.conv2d, "max_pool2d": torch.nn.functional.max_pool2d,
          "adaptive_avg_pool2d": torch.nn.functional.adaptive_avg_pool2d}.get(op, getattr(torch, op, None))
    expected = fn(*args)
    text, inputs = op_graph(op, args, [expected])
    twin_vs_runtime(text, inputs, None, tmp_path, rtol=1e-5, atol=1e-5)


def test_twin_matches_runtime_on_an_mlp(tmp_path):
    """An MLP graph with frees: linear, relu, linear, log_softmax."""
    text = f"""trace.graph @mlp(%w1: {ttype(16, 8)} {{trace.param = "fc1.weight"}},
    %b1: {ttype(16)} {{trace.param = "fc1.bias"}}, %w2: {ttype(4, 16)} {{trace.param = "fc2.weight"}},
    %b2: {ttype(4)} {{trace.param = "fc2.bias"}}, %x: {ttype(5, 8)} {{trace.input = "x"}}) -> {ttype(5, 4)} {{
  %0 = pyop "linear"(%x, %w1, %b1) : ({ttype(5, 8)}, {ttype(16, 8)}, {ttype(16)}) -> {ttype(5, 16)}
  %1 = pyop "relu"(%0) : ({ttype(5, 16)}) -> {ttype(5, 16)}
  free %0 : {ttype(5, 16)}
  %2 = pyop "linear"(%1, %w2, %b2) : ({ttype(5, 16)}, {ttype(4, 16)}, {ttype(4)}) -> {ttype(5, 4)}
  free %1 : {ttype(5, 16)}
  %3 = pyop "log_softmax"(%2, -1, None) : ({ttype(5, 4)}) -> {ttype(5, 4)}
  free %2 : {ttype(5, 4)}
  ret %3 : {ttype(5, 4)}
}}
"""
    model = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.ReLU(), torch.nn.Linear(16, 4),
                                torch.nn.LogSoftmax(-1))
    params = {"fc1.weight": model[0].weight.detach(), "fc1.bias": model[0].bias.detach(),
              "fc2.weight": model[2].weight.detach(), "fc2.bias": model[2].bias.detach()}
    x = torch.randn(5, 8)
    out = twin_vs_runtime(text, {"x": x}, params, tmp_path)
    with torch.no_grad():
        torch.testing.assert_close(out[0], model(x), rtol=1e-5, atol=1e-6)


def test_unlowered_op_is_an_error_naming_it(tmp_path):
    # An uneven adaptive pool (windows of different sizes) stays a pyop.
    text, inputs = op_graph("adaptive_avg_pool2d", [torch.randn(1, 1, 5, 5), 2],
                            [torch.zeros(1, 1, 2, 2)])
    graph = tmp_path / "g.mlir"
    graph.write_text(text)
    run = subprocess.run([os.path.join(BIN, "trace-opt"), str(graph), "--trace-lower-to-cpu"],
                         capture_output=True, text=True)
    assert run.returncode != 0
    assert "trace-lower-to-cpu: op 'adaptive_avg_pool2d' was not lowered to linalg" in run.stderr


# scaled_dot_product_attention: the lowering against the runtime's kernel
# (PyTorch's math backend). Masks: bool (False masks out) and float (added),
# each with a row masked out entirely, which both give zeros, not NaN.
def _sdpa_cases():
    g = torch.Generator().manual_seed(2)
    r = lambda *s: torch.randn(*s, generator=g)
    bool_mask = torch.rand(4, 5, generator=g) > 0.4
    bool_mask[1] = False
    float_mask = r(2, 1, 4, 5)
    float_mask[0, 0, 2] = float("-inf")
    float_mask[1, 0, 0, 3] = float("-inf")
    return [
        ("4d", [r(2, 3, 4, 8), r(2, 3, 5, 8), r(2, 3, 5, 6)]),
        ("3d_bool_mask", [r(3, 4, 8), r(3, 5, 8), r(3, 5, 6), bool_mask]),
        ("4d_float_mask_scale", [r(2, 3, 4, 8), r(2, 3, 5, 8), r(2, 3, 5, 8), float_mask, 0.0, False, 0.25]),
        ("3d_causal_scale", [r(3, 5, 4), r(3, 5, 4), r(3, 5, 2), None, 0.0, True, 0.7]),
        ("causal_more_keys", [r(2, 2, 3, 4), r(2, 2, 6, 4), r(2, 2, 6, 4), None, 0.0, True]),
        ("broadcast_batch", [r(2, 3, 4, 8), r(3, 5, 8), r(1, 3, 5, 8)]),
    ]


SDPA = _sdpa_cases()


@pytest.mark.parametrize("name,args", SDPA, ids=[n for n, _ in SDPA])
def test_twin_matches_runtime_sdpa(name, args, tmp_path):
    q, k, v = args[:3]
    result = torch.empty(*torch.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2]),
                         q.shape[-2], v.shape[-1])
    text, inputs = op_graph("scaled_dot_product_attention", args, [result])
    out = twin_vs_runtime(text, inputs, None, tmp_path, rtol=1e-5, atol=1e-6)
    mask = args[3] if len(args) > 3 else None
    if mask is not None:
        # Fully masked rows are zeros in both.
        full = ~mask if mask.dtype == torch.bool else mask == float("-inf")
        dead = full.all(-1).expand(out[0].shape[:-1])
        assert dead.any()
        assert (out[0][dead] == 0).all()
    else:
        causal = len(args) > 5 and args[5]
        want = torch.nn.functional.scaled_dot_product_attention(
            q, k, v, is_causal=causal, scale=args[6] if len(args) > 6 else None)
        torch.testing.assert_close(out[0], want, rtol=1e-5, atol=1e-5)


def test_sdpa_with_dropout_stays_a_pyop(tmp_path):
    q = torch.randn(2, 3, 4)
    text, _ = op_graph("scaled_dot_product_attention", [q, q, q, None, 0.1], [q])
    graph = tmp_path / "g.mlir"
    graph.write_text(text)
    run = subprocess.run([os.path.join(BIN, "trace-opt"), str(graph), "--convert-trace-to-linalg"],
                         capture_output=True, text=True, check=True)
    assert "not lowered to linalg: dropout_p > 0 draws random numbers" in run.stderr
    assert 'trace.pyop "scaled_dot_product_attention"' in run.stdout


# lstm and gru in eval mode: layers, directions, batch_first, with and
# without biases, given initial states; the runtime's RNNLayers.h is the
# reference, PyTorch's nn.LSTM / nn.GRU the check of both.
RNNS = [
    # (cell, input, hidden, layers, bidirectional, batch_first, bias, seq, batch)
    ("lstm", 3, 4, 1, False, False, True, 5, 2),
    ("lstm", 3, 5, 2, True, True, True, 4, 3),
    ("lstm", 4, 3, 3, False, False, False, 6, 2),
    ("lstm", 2, 4, 2, True, False, False, 1, 1),
    ("gru", 3, 4, 1, False, False, True, 5, 2),
    ("gru", 3, 5, 2, True, True, True, 4, 3),
    ("gru", 4, 3, 2, False, True, False, 6, 2),
]


@pytest.mark.parametrize("cell,inp,hid,layers,bidir,bf,bias,seq,batch", RNNS,
                         ids=[f"{c[0]}-l{c[3]}{'-bi' if c[4] else ''}{'-bf' if c[5] else ''}"
                              f"{'' if c[6] else '-nobias'}" for c in RNNS])
def test_twin_matches_runtime_rnn(cell, inp, hid, layers, bidir, bf, bias, seq, batch, tmp_path):
    torch.manual_seed(3)
    cls = torch.nn.LSTM if cell == "lstm" else torch.nn.GRU
    # dropout only acts in training: eval mode ignores it.
    module = cls(inp, hid, layers, bias=bias, batch_first=bf, dropout=0.3 if layers > 1 else 0.0,
                 bidirectional=bidir).eval()
    dirs = 2 if bidir else 1
    x = torch.randn((batch, seq, inp) if bf else (seq, batch, inp))
    h0 = torch.randn(layers * dirs, batch, hid)
    c0 = torch.randn(layers * dirs, batch, hid)
    with torch.no_grad():
        want = module(x, (h0, c0) if cell == "lstm" else h0)
    want = [want[0], *want[1]] if cell == "lstm" else list(want)
    states = [h0, c0] if cell == "lstm" else [h0]
    weights = [w.detach() for w in module._flat_weights]
    args = [x, *states, *weights, bias, layers, 0.3 if layers > 1 else 0.0, False, bidir, bf]
    text, inputs = op_graph(cell, args, want)
    out = twin_vs_runtime(text, inputs, None, tmp_path, rtol=1e-5, atol=1e-6)
    for got, expected in zip(out, want):
        torch.testing.assert_close(got, expected, rtol=1e-5, atol=1e-5)


def test_lstm_training_dropout_stays_a_pyop(tmp_path):
    module = torch.nn.LSTM(3, 4, 2)
    x, h0 = torch.randn(5, 2, 3), torch.randn(2, 2, 4)
    args = [x, h0, h0, *[w.detach() for w in module._flat_weights], True, 2, 0.5, True, False, False]
    text, _ = op_graph("lstm", args, [torch.zeros(5, 2, 4), h0, h0])
    graph = tmp_path / "g.mlir"
    graph.write_text(text)
    run = subprocess.run([os.path.join(BIN, "trace-opt"), str(graph), "--convert-trace-to-linalg"],
                         capture_output=True, text=True, check=True)
    assert "not lowered to linalg: training dropout between layers draws random numbers" in run.stderr


# The benchmark models, whole: both forms of the transformer encoder layer
# and the word language model (LSTM from examples/word_lm.trace, and GRU).
from test_graphs import (transformer_layer_export_graph, transformer_layer_graph,  # noqa: E402
                         word_lm_gru_case)
from word_lm_inputs import RNNModel  # noqa: E402  (test_graphs put examples/ on the path)


@pytest.mark.parametrize("graph", [transformer_layer_graph, transformer_layer_export_graph])
def test_twin_matches_runtime_on_transformer_layers(graph, tmp_path):
    B, S, E, H, F = 2, 7, 32, 4, 64
    torch.manual_seed(4)
    layer = torch.nn.TransformerEncoderLayer(E, H, F, dropout=0.1, batch_first=True).eval()
    x = torch.randn(B, S, E)
    text = graph(B, S, E, H, F)
    assert "scaled_dot_product_attention" in text or graph is transformer_layer_graph
    out = twin_vs_runtime(text, {"src": x}, dict(layer.state_dict()), tmp_path, rtol=1e-5, atol=1e-5)
    with torch.no_grad():
        torch.testing.assert_close(out[0], layer(x), rtol=1e-4, atol=1e-5)


def test_twin_matches_runtime_on_the_word_lm(tmp_path):
    from test_word_lm import TRACE, eval_trace_text, import_anf
    torch.manual_seed(0)
    model = RNNModel()
    with torch.no_grad():
        model.encoder.weight.uniform_(-0.1, 0.1)
        model.decoder.weight.uniform_(-0.1, 0.1)
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, 10000, (35, 20), generator=g)
    h0, c0 = 0.5 * torch.randn(2, 20, 200, generator=g), 0.5 * torch.randn(2, 20, 200, generator=g)
    with open(TRACE) as f:
        graph = import_anf(eval_trace_text(f.read()))
    assert '"lstm"' in graph
    out = twin_vs_runtime(graph, {"tokens": tokens, "hidden.0": h0, "hidden.1": c0}, params, tmp_path,
                          rtol=1e-5, atol=1e-5)
    assert [o.shape for o in out] == [(35, 20, 10000), (2, 20, 200), (2, 20, 200)]


def test_twin_matches_runtime_on_the_gru_word_lm(tmp_path):
    text, inputs, params, expected = word_lm_gru_case()
    out = twin_vs_runtime(text, inputs, params, tmp_path, rtol=1e-5, atol=1e-5)
    for got, want in zip(out, expected):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)


# The special functions, argmax/argmin, max.dim/min.dim and var: the lowered
# graph against PyTorch and against the runtime's kernels. The special
# functions compute in double as the kernels do (lgamma as fdlibm's, the
# others as Runtime/SpecialFunctions.h), so the twin agrees with the runtime
# to an ulp or two of f64 and with PyTorch as the kernels' own tests ask
# (test_special_ops.py): f32 within rtol 1e-5, f64 within 1e-10 (trigamma's
# 1e-8: PyTorch's series stops earlier). Poles, +-0, +-inf, NaN, erfinv's
# +-1, the reflection below 0 and large arguments are among the values.
from traceir_testing import mlir_type  # noqa: E402

INF, NAN = float("inf"), float("nan")
SPECIAL_EDGES = {
    "gamma": [1.0, 2.0, 0.5, -0.5, -2.5, 0.0, -0.0, -1.0, -3.0, -2.0000001, 1e-8, 1e-30, 1.4616321449683622,
              0.9, 1.7316, 0.2316, 2.99, 7.99, 8.0, 171.5, 1e8, 1e20, 4e36, INF, -INF, NAN],
    "erfinv": [0.0, -0.0, 0.5, -0.5, 0.999, -0.999999, 1 - 1e-7, 1e-30, 0.7, 1.0, -1.0, 1.5, -2.0, INF, NAN],
}
SPECIAL_OPS = [("lgamma", "gamma", None), ("digamma", "gamma", None), ("erfinv", "erfinv", None),
               ("polygamma", "gamma", 1), ("polygamma", "gamma", 2), ("polygamma", "gamma", 3),
               ("polygamma", "gamma", 6)]


def twin_outputs(text, inputs, tmp_path):
    graph = tmp_path / "g.mlir"
    graph.write_text(text)
    path = tmp_path / "inputs.st"
    save_file({k: v.contiguous() for k, v in inputs.items()}, str(path))
    subprocess.run([os.path.join(BIN, "trace-twin-run"), str(graph), "--inputs", str(path), "--outputs",
                    str(tmp_path / "twin.st")], check=True, stdout=subprocess.DEVNULL)
    out = load_file(str(tmp_path / "twin.st"))
    return [out[f"output{i}"] for i in range(len(out))]


def special_inputs(kind, dtype):
    g = torch.Generator().manual_seed(7)
    if kind == "erfinv":
        spread = torch.cat([torch.rand(200, generator=g, dtype=torch.float64) * 2 - 1,
                            1 - torch.rand(20, generator=g, dtype=torch.float64) * 1e-6])
    else:
        spread = torch.cat([torch.rand(150, generator=g, dtype=torch.float64) * 24 - 12,
                            torch.rand(50, generator=g, dtype=torch.float64) * 200,
                            torch.rand(20, generator=g, dtype=torch.float64) * 1e-3 + 0.9995,
                            torch.rand(20, generator=g, dtype=torch.float64) * 1e-3 + 1.9995])
    return torch.cat([spread, torch.tensor(SPECIAL_EDGES[kind], dtype=torch.float64)]).to(dtype)


def special_graph(dtype):
    """One graph per dtype: every special function, hypot and signbit."""
    x, y = special_inputs("gamma", dtype), special_inputs("erfinv", dtype)
    h = torch.tensor([3.0, -0.0, INF, NAN, -INF, 1e300, 5e-324, -2.5, NAN], dtype=torch.float64).to(dtype)
    k = torch.tensor([4.0, 0.0, NAN, -INF, 1.0, 1e300, 5e-324, -0.0, 1.0], dtype=torch.float64).to(dtype)
    tx, ty, th = mlir_type(x), mlir_type(y), mlir_type(h)
    body, results, want = [], [], []
    for i, (op, kind, n) in enumerate(SPECIAL_OPS):
        arg, t = ("%x", tx) if kind == "gamma" else ("%y", ty)
        call = f"{n}, {arg}" if n is not None else arg
        body.append(f'%r{i} = pyop "{op}"({call}) : ({t}) -> {t}')
        results.append((f"%r{i}", t))
        src = x if kind == "gamma" else y
        want.append(torch.polygamma(n, src) if n is not None else getattr(torch, op)(src))
    bt = mlir_type(h.signbit())
    body += [f'%hy = pyop "hypot"(%h, %k) : ({th}, {th}) -> {th}',
             f'%sb = pyop "signbit"(%h) : ({th}) -> {bt}']
    results += [("%hy", th), ("%sb", bt)]
    want += [torch.hypot(h, k), torch.signbit(h)]
    names = ", ".join(r for r, _ in results)
    types = ", ".join(t for _, t in results)
    text = (f'trace.graph @special(%x: {tx} {{trace.input = "x"}}, %y: {ty} {{trace.input = "y"}}, '
            f'%h: {th} {{trace.input = "h"}}, %k: {th} {{trace.input = "k"}}) -> ({types}) {{\n  '
            + "\n  ".join(body) + f"\n  ret {names} : {types}\n}}\n")
    return text, {"x": x, "y": y, "h": h, "k": k}, want


def max_errors(got, want):
    """(max relative error where PyTorch's value is finite and above 1e-3 in
    magnitude, so not at a zero of the function; max absolute error where it
    is finite)."""
    got, want = got.double(), want.double()
    finite = torch.isfinite(want) & torch.isfinite(got)
    err = (got - want).abs()[finite]
    nz = finite & (want.abs() > 1e-3)
    rel = ((got - want).abs()[nz] / want.abs()[nz]).max().item() if nz.any() else 0.0
    return rel, err.max().item() if err.numel() else 0.0


@pytest.mark.parametrize("dtype", [torch.float32, torch.float64], ids=["f32", "f64"])
def test_twin_special_functions_match_torch_and_runtime(dtype, tmp_path):
    text, inputs, want = special_graph(dtype)
    twin = twin_outputs(text, inputs, tmp_path)
    runtime, _ = run_graph(text, inputs, device="cpu")
    labels = [op if n is None else f"{op}({n})" for op, _, n in SPECIAL_OPS] + ["hypot", "signbit"]
    for label, got, ref, exp in zip(labels, twin, runtime, want):
        # Same algorithms in double: within a few ulps of f64 of the kernels.
        torch.testing.assert_close(got, ref, rtol=1e-13 if dtype == torch.float64 else 0,
                                   atol=1e-13 if dtype == torch.float64 else 0, equal_nan=True,
                                   msg=lambda m: f"{label} twin vs runtime: {m}")
        if dtype == torch.float64:
            f64 = 1e-8 if label == "polygamma(1)" else 1e-10
            tol = {"rtol": f64, "atol": f64}
        else:
            tol = {"rtol": 1e-5, "atol": 1e-6}
        if label == "polygamma(1)" and dtype == torch.float32:
            # PyTorch's f32 trigamma computes in float: at its poles "a very
            # large number" that depends on the precision of sin(pi x), and
            # elsewhere in the reflection below 0 up to a few e-5 off. There
            # the twin (which computes in double) is checked against
            # PyTorch's f64 value instead.
            src = inputs["x"]
            near = src < 0
            torch.testing.assert_close(got[near & (src != src.round())],
                                       torch.polygamma(1, src.double())[near & (src != src.round())].float())
            got, exp = got[~near], exp[~near]
        torch.testing.assert_close(got, exp, equal_nan=True, **tol, msg=lambda m: f"{label} vs torch: {m}")
        if got.is_floating_point():
            print(f"{label} {dtype}: max rel error {max_errors(got, exp)[0]:.3g}, "
                  f"max abs error {max_errors(got, exp)[1]:.3g} against torch")


def _reduction_inputs(dtype):
    g = torch.Generator().manual_seed(8)
    if dtype == torch.bool:
        return torch.rand(4, 5, 3, generator=g) > 0.5
    if not dtype.is_floating_point:
        # Few values, so ties are many: the first index must win.
        x = torch.randint(-3, 3, (4, 5, 3), generator=g).to(dtype)
        x[0, 0, 0] = torch.iinfo(dtype).min
        x[1, 2, 1] = torch.iinfo(dtype).max
        return x
    x = torch.randint(-4, 4, (4, 5, 3), generator=g).to(dtype) * 0.5
    x[0, 1, 2] = x[0, 3, 2] = NAN  # the first NaN is the extreme of both
    x[1, :, 0] = -INF
    x[2, 4, :] = INF
    x[3, 0, 1] = -0.0
    return x


REDUCTION_CALLS = [
    # (op, args after self, torch function)
    ("argmax", [1], lambda x: torch.argmax(x, 1)),
    ("argmax", [], lambda x: torch.argmax(x)),
    ("argmax", [-1, True], lambda x: torch.argmax(x, -1, keepdim=True)),
    ("argmin", [0], lambda x: torch.argmin(x, 0)),
    ("argmin", [None, True], lambda x: torch.argmin(x, None, keepdim=True)),
    ("max", [1], lambda x: tuple(torch.max(x, 1))),
    ("max", [2, True], lambda x: tuple(torch.max(x, 2, keepdim=True))),
    ("min", [0, True], lambda x: tuple(torch.min(x, 0, keepdim=True))),
    ("min", [-1], lambda x: tuple(torch.min(x, -1))),
]
VAR_CALLS = [
    ("var", [], lambda x: torch.var(x)),
    ("var", [[1]], lambda x: torch.var(x, 1)),
    ("var", [[0, 2], 0, True], lambda x: torch.var(x, (0, 2), correction=0, keepdim=True)),
    ("var", [-1, 2.5], lambda x: torch.var(x, -1, correction=2.5)),
    ("var", [[2], 3], lambda x: torch.var(x, 2, correction=3)),  # n - correction == 0: inf and nan
]


def reduction_graph(x, calls):
    from traceir_testing import py_literal
    tx = mlir_type(x)
    body, results, want = [], [], []
    for i, (op, args, fn) in enumerate(calls):
        expected = fn(x)
        expected = list(expected) if isinstance(expected, tuple) else [expected]
        types = [mlir_type(e) for e in expected]
        call = ", ".join(["%x"] + [py_literal(a) if not isinstance(a, list) else "[" + ", ".join(map(str, a)) + "]"
                                   for a in args])
        if len(types) == 1:
            body.append(f'%r{i} = pyop "{op}"({call}) : ({tx}) -> {types[0]}')
            results.append((f"%r{i}", types[0]))
        else:
            body.append(f'%r{i}:2 = pyop "{op}"({call}) : ({tx}) -> ({", ".join(types)})')
            results += [(f"%r{i}#0", types[0]), (f"%r{i}#1", types[1])]
        want += expected
    names, types = ", ".join(r for r, _ in results), ", ".join(t for _, t in results)
    text = (f'trace.graph @reductions(%x: {tx} {{trace.input = "x"}}) -> ({types}) {{\n  '
            + "\n  ".join(body) + f"\n  ret {names} : {types}\n}}\n")
    return text, want


# (trace-twin-run reads f32, f64, i32, i64 and bool tensors; the lit test
# convert-trace-to-linalg.mlir shows the narrower integers' start values.)
@pytest.mark.filterwarnings("ignore:var\\(\\)")  # n - correction <= 0, on purpose
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.int64, torch.int32, torch.bool],
                         ids=lambda d: str(d)[6:])
def test_twin_index_reductions_match_torch_and_runtime(dtype, tmp_path):
    x = _reduction_inputs(dtype)
    calls = REDUCTION_CALLS + (VAR_CALLS if dtype.is_floating_point else [])
    if dtype == torch.bool:  # torch.argmax/argmin refuse bools; max.dim and min.dim take them
        calls = [c for c in calls if c[0] in ("max", "min")]
    text, want = reduction_graph(x, calls)
    twin = twin_outputs(text, {"x": x}, tmp_path)
    runtime, _ = run_graph(text, {"x": x}, device="cpu")
    assert len(twin) == len(runtime) == len(want)
    for got, ref, exp in zip(twin, runtime, want):
        # The kernel's arithmetic, in the same order: equal.
        torch.testing.assert_close(got, ref, rtol=0, atol=0, equal_nan=True)
        torch.testing.assert_close(got, exp, rtol=1e-6, atol=1e-6, equal_nan=True)


def test_twin_var_of_a_large_offset_matches_torch(tmp_path):
    # Two passes in double: no cancellation from a large mean.
    x = torch.randn(3, 1000, dtype=torch.float32) + 1e4
    text, want = reduction_graph(x, [("var", [[1]], lambda x: torch.var(x, 1)),
                                     ("var", [[1], 0], lambda x: torch.var(x, 1, correction=0))])
    for got, exp in zip(twin_outputs(text, {"x": x}, tmp_path), want):
        torch.testing.assert_close(got, exp, rtol=1e-5, atol=1e-6)


def test_twin_ones_like_and_special_ops_through_from_torch(tmp_path):
    """A small model through traceir.from_torch, lowered whole by the CPU
    twin (trace-lower-to-cpu refuses an op left unlowered): the special
    functions inside a bigger graph, with max.dim, argmax and var."""
    import traceir

    class M(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.fc = torch.nn.Linear(6, 6)

        def forward(self, x):
            h = self.fc(x)
            a = torch.lgamma(h.abs() + 0.25) + torch.digamma(h.abs() + 0.5)
            b = torch.special.erfinv(torch.tanh(h)) * torch.polygamma(2, h.abs() + 1.0)
            c = torch.hypot(a, b) + torch.ones_like(a) + torch.signbit(h).float()
            values, indices = torch.max(c, dim=1, keepdim=True)
            return (c - values, indices, torch.argmin(c, dim=0), torch.var(c, dim=1, correction=0))

    torch.manual_seed(9)
    model, x = M().eval(), torch.randn(4, 6)
    module = traceir.from_torch(model, (x,))
    text = module.text
    for op in ("lgamma", "digamma", "erfinv", "polygamma", "hypot", "ones_like", "signbit", "max", "argmin",
               "var"):
        assert f'"{op}"' in text, op
    lowered = subprocess.run([os.path.join(BIN, "trace-opt"), "-", "--trace-lower-to-cpu"], input=text,
                             capture_output=True, text=True)
    assert lowered.returncode == 0, lowered.stderr
    params = {k: v.detach() for k, v in module.params.items()}
    inputs = {"x": x} if 'trace.input = "x"' in text else None
    assert inputs, "the imported graph names its input x"
    out = twin_vs_runtime(text, inputs, params, tmp_path, rtol=1e-5, atol=1e-6)
    with torch.no_grad():
        want = model(x)
    for got, exp in zip(out, want):
        torch.testing.assert_close(got, exp, rtol=1e-5, atol=1e-5)


# cumsum and cumprod: the kernel's accumulation (double for a float result,
# wrapping int64 for an integer one), so the twin equals the runtime.
SCANS = [
    ("cumsum", lambda: [torch.randn(3, 7, dtype=torch.float32), 1]),
    ("cumsum", lambda: [torch.randn(4, 3, 2, dtype=torch.float64), 0]),
    ("cumprod", lambda: [torch.rand(2, 9, dtype=torch.float32) + 0.5, -1]),
    ("cumprod", lambda: [torch.tensor([[1.0, NAN, 2.0], [INF, 0.0, -1.0]]), 1]),
    ("cumsum", lambda: [torch.tensor([INF, -INF, 1.0, -0.0]), 0]),
    ("cumsum", lambda: [torch.randint(-5, 5, (3, 4)), 0]),
    ("cumprod", lambda: [torch.randint(-3, 4, (2, 30), dtype=torch.int64) * 1000, 1]),  # wraps
    ("cumsum", lambda: [torch.randint(-5, 5, (6,), dtype=torch.int32), 0]),
    ("cumsum", lambda: [torch.rand(3, 4) > 0.5, 1]),
    ("cumsum", lambda: [torch.tensor(2.5), 0]),
    ("cumsum", lambda: [torch.randn(3, 4), 1, "torch.float64"]),
]


@pytest.mark.parametrize("i", range(len(SCANS)), ids=[f"{op}{i}" for i, (op, _) in enumerate(SCANS)])
def test_twin_scans_match_torch_and_runtime(i, tmp_path):
    op, make = SCANS[i]
    args = make()
    dtype = getattr(torch, args[2][6:]) if len(args) > 2 else None
    want = getattr(torch, op)(args[0], args[1], dtype=dtype)
    text, inputs = op_graph(op, args, [want])
    out = twin_vs_runtime(text, inputs, None, tmp_path, rtol=0, atol=0)
    torch.testing.assert_close(out[0], want, rtol=1e-6, atol=1e-6, equal_nan=True)
