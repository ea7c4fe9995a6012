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
