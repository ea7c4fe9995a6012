"""Whole graphs end to end against PyTorch eager: an MLP and a transformer
encoder layer (nn.TransformerEncoderLayer, eval mode), written as TraceIR by
hand the way the tracer records them, with parameters bound by their
state_dict names. Each runs with frees (checked) and without, and the
measured peak equals the prediction in both cases; freeing lowers it.
"""
import torch

from traceir_testing import run_graph

torch.manual_seed(0)


def t(*shape, dtype="f32"):
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dtype}>"


def check_graph(text, model_inputs, params, expected, rtol=1e-4, atol=1e-5):
    peaks = {}
    for free in (True, False):
        outs, report = run_graph(text, model_inputs, params, free=free, check_frees=free)
        dev = report["devices"][0]
        assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report
        peaks[free] = dev["peak_bytes"]
        for got, want in zip(outs, expected):
            torch.testing.assert_close(got, want, rtol=rtol, atol=atol)
    assert peaks[True] < peaks[False], peaks
    return peaks


def test_mlp():
    model = torch.nn.Sequential(torch.nn.Linear(20, 64), torch.nn.ReLU(),
                                torch.nn.Linear(64, 64), torch.nn.GELU(),
                                torch.nn.Linear(64, 10), torch.nn.LogSoftmax(-1)).eval()
    x = torch.randn(8, 20)
    text = f"""
trace.graph @mlp(%w0: {t(64, 20)} {{trace.param = "0.weight"}}, %b0: {t(64)} {{trace.param = "0.bias"}},
                 %w1: {t(64, 64)} {{trace.param = "2.weight"}}, %b1: {t(64)} {{trace.param = "2.bias"}},
                 %w2: {t(10, 64)} {{trace.param = "4.weight"}}, %b2: {t(10)} {{trace.param = "4.bias"}},
                 %x: {t(8, 20)} {{trace.input = "x", trace.donated}}) -> {t(8, 10)} {{
  %0 = pyop "linear"(%x, %w0, %b0) : ({t(8, 20)}, {t(64, 20)}, {t(64)}) -> {t(8, 64)}
  %1 = pyop "relu"(%0) : ({t(8, 64)}) -> {t(8, 64)}
  %2 = pyop "linear"(%1, %w1, %b1) : ({t(8, 64)}, {t(64, 64)}, {t(64)}) -> {t(8, 64)}
  %3 = pyop "gelu"(%2) : ({t(8, 64)}) -> {t(8, 64)}
  %4 = pyop "linear"(%3, %w2, %b2) : ({t(8, 64)}, {t(10, 64)}, {t(10)}) -> {t(8, 10)}
  %5 = pyop "log_softmax"(%4, -1) : ({t(8, 10)}) -> {t(8, 10)}
  ret %5 : {t(8, 10)}
}}
"""
    with torch.no_grad():
        want = model(x)
    check_graph(text, {"x": x}, dict(model.state_dict()), [want])


def transformer_layer_graph(B, S, E, H, F):
    D = E // H
    scale = 1.0 / D ** 0.5
    return f"""
trace.graph @encoder_layer(
    %in_w: {t(3 * E, E)} {{trace.param = "self_attn.in_proj_weight"}}, %in_b: {t(3 * E)} {{trace.param = "self_attn.in_proj_bias"}},
    %out_w: {t(E, E)} {{trace.param = "self_attn.out_proj.weight"}}, %out_b: {t(E)} {{trace.param = "self_attn.out_proj.bias"}},
    %l1_w: {t(F, E)} {{trace.param = "linear1.weight"}}, %l1_b: {t(F)} {{trace.param = "linear1.bias"}},
    %l2_w: {t(E, F)} {{trace.param = "linear2.weight"}}, %l2_b: {t(E)} {{trace.param = "linear2.bias"}},
    %n1_w: {t(E)} {{trace.param = "norm1.weight"}}, %n1_b: {t(E)} {{trace.param = "norm1.bias"}},
    %n2_w: {t(E)} {{trace.param = "norm2.weight"}}, %n2_b: {t(E)} {{trace.param = "norm2.bias"}},
    %x: {t(B, S, E)} {{trace.input = "src", trace.donated}}) -> {t(B, S, E)} {{
  %qkv = pyop "linear"(%x, %in_w, %in_b) : ({t(B, S, E)}, {t(3 * E, E)}, {t(3 * E)}) -> {t(B, S, 3 * E)}
  %q0 = pyop "narrow"(%qkv, 2, 0, {E}) : ({t(B, S, 3 * E)}) -> {t(B, S, E)}
  %k0 = pyop "narrow"(%qkv, 2, {E}, {E}) : ({t(B, S, 3 * E)}) -> {t(B, S, E)}
  %v0 = pyop "narrow"(%qkv, 2, {2 * E}, {E}) : ({t(B, S, 3 * E)}) -> {t(B, S, E)}
  %q1 = pyop "view"(%q0, ({B}, {S}, {H}, {D})) : ({t(B, S, E)}) -> {t(B, S, H, D)}
  %k1 = pyop "view"(%k0, ({B}, {S}, {H}, {D})) : ({t(B, S, E)}) -> {t(B, S, H, D)}
  %v1 = pyop "view"(%v0, ({B}, {S}, {H}, {D})) : ({t(B, S, E)}) -> {t(B, S, H, D)}
  %q = pyop "transpose"(%q1, 1, 2) : ({t(B, S, H, D)}) -> {t(B, H, S, D)}
  %k = pyop "transpose"(%k1, 1, 2) : ({t(B, S, H, D)}) -> {t(B, H, S, D)}
  %v = pyop "transpose"(%v1, 1, 2) : ({t(B, S, H, D)}) -> {t(B, H, S, D)}
  %kt = pyop "transpose"(%k, -2, -1) : ({t(B, H, S, D)}) -> {t(B, H, D, S)}
  %s0 = pyop "matmul"(%q, %kt) : ({t(B, H, S, D)}, {t(B, H, D, S)}) -> {t(B, H, S, S)}
  %s = pyop "mul"(%s0, {scale!r}) : ({t(B, H, S, S)}) -> {t(B, H, S, S)}
  %p0 = pyop "softmax"(%s, -1) : ({t(B, H, S, S)}) -> {t(B, H, S, S)}
  %p = pyop "dropout"(%p0, 0.1, False) : ({t(B, H, S, S)}) -> {t(B, H, S, S)}
  %o0 = pyop "matmul"(%p, %v) : ({t(B, H, S, S)}, {t(B, H, S, D)}) -> {t(B, H, S, D)}
  %o1 = pyop "transpose"(%o0, 1, 2) : ({t(B, H, S, D)}) -> {t(B, S, H, D)}
  %o2 = pyop "reshape"(%o1, ({B}, {S}, {E})) : ({t(B, S, H, D)}) -> {t(B, S, E)}
  %o = pyop "linear"(%o2, %out_w, %out_b) : ({t(B, S, E)}, {t(E, E)}, {t(E)}) -> {t(B, S, E)}
  %r1 = pyop "add"(%x, %o) : ({t(B, S, E)}, {t(B, S, E)}) -> {t(B, S, E)}
  %x1 = pyop "layer_norm"(%r1, ({E},), %n1_w, %n1_b, 1.0e-05) : ({t(B, S, E)}, {t(E)}, {t(E)}) -> {t(B, S, E)}
  %f0 = pyop "linear"(%x1, %l1_w, %l1_b) : ({t(B, S, E)}, {t(F, E)}, {t(F)}) -> {t(B, S, F)}
  %f1 = pyop "relu"(%f0) : ({t(B, S, F)}) -> {t(B, S, F)}
  %f2 = pyop "dropout"(%f1, 0.1, False) : ({t(B, S, F)}) -> {t(B, S, F)}
  %f = pyop "linear"(%f2, %l2_w, %l2_b) : ({t(B, S, F)}, {t(E, F)}, {t(E)}) -> {t(B, S, E)}
  %r2 = pyop "add"(%x1, %f) : ({t(B, S, E)}, {t(B, S, E)}) -> {t(B, S, E)}
  %y = pyop "layer_norm"(%r2, ({E},), %n2_w, %n2_b, 1.0e-05) : ({t(B, S, E)}, {t(E)}, {t(E)}) -> {t(B, S, E)}
  ret %y : {t(B, S, E)}
}}
"""


def test_transformer_encoder_layer():
    B, S, E, H, F = 2, 7, 32, 4, 64
    layer = torch.nn.TransformerEncoderLayer(E, H, F, dropout=0.1, batch_first=True).eval()
    x = torch.randn(B, S, E)
    with torch.no_grad():
        want = layer(x)
    peaks = check_graph(transformer_layer_graph(B, S, E, H, F), {"src": x},
                        dict(layer.state_dict()), [want])
    assert peaks[True] > 0
