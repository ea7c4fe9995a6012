"""Whole graphs end to end against PyTorch eager: an MLP, a transformer
encoder layer (nn.TransformerEncoderLayer, eval mode), a CNN with batch norm
and the word language model with a GRU, written as TraceIR by hand the way
the tracer (or torch.export) records them, with parameters bound by their
state_dict names. Each runs with frees (checked) and without, and the
measured peak equals the prediction in both cases; freeing lowers it. The
GRU word LM runs on the CPU and on CUDA (the `device` fixture of
conftest.py; skipped, with one line saying why, where trace-run finds no
CUDA device), on CUDA within rtol=1e-3, atol=1e-4 (its gemms sum in
another order); the others on TRACEIR_DEVICE's.
"""
import os
import sys

import torch

from traceir_testing import ROOT, reported_device, run_graph

sys.path.insert(0, os.path.join(ROOT, "examples"))
from word_lm_inputs import RNNModel  # noqa: E402  (the examples' word LM)

torch.manual_seed(0)


def t(*shape, dtype="f32"):
    return "tensor<" + "x".join(str(d) for d in shape) + f"x{dtype}>"


def check_graph(text, model_inputs, params, expected, rtol=1e-4, atol=1e-5):
    peaks = {}
    for free in (True, False):
        outs, report = run_graph(text, model_inputs, params, free=free, check_frees=free)
        dev = report["devices"][0]
        assert dev["device"] == reported_device(), report
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


def transformer_layer_export_graph(B, S, E, H, F):
    """TransformerEncoderLayer (batch_first, eval) as torch.export records it
    (torch 2.x, `ep.graph`): sequence-first internally, the packed in_proj
    split with unflatten/select, heads split by view + transpose, and one
    scaled_dot_product_attention on the strided [B, H, S, D] views."""
    D = E // H
    sf, bh = t(S, B, E), t(S, B * H, D)
    return f"""
trace.graph @encoder_layer_export(
    %in_w: {t(3 * E, E)} {{trace.param = "self_attn.in_proj_weight"}}, %in_b: {t(3 * E)} {{trace.param = "self_attn.in_proj_bias"}},
    %out_w: {t(E, E)} {{trace.param = "self_attn.out_proj.weight"}}, %out_b: {t(E)} {{trace.param = "self_attn.out_proj.bias"}},
    %l1_w: {t(F, E)} {{trace.param = "linear1.weight"}}, %l1_b: {t(F)} {{trace.param = "linear1.bias"}},
    %l2_w: {t(E, F)} {{trace.param = "linear2.weight"}}, %l2_b: {t(E)} {{trace.param = "linear2.bias"}},
    %n1_w: {t(E)} {{trace.param = "norm1.weight"}}, %n1_b: {t(E)} {{trace.param = "norm1.bias"}},
    %n2_w: {t(E)} {{trace.param = "norm2.weight"}}, %n2_b: {t(E)} {{trace.param = "norm2.bias"}},
    %src: {t(B, S, E)} {{trace.input = "src"}}) -> {t(B, S, E)} {{
  %transpose = pyop "transpose"(%src, 1, 0) : ({t(B, S, E)}) -> {sf}
  %linear = pyop "linear"(%transpose, %in_w, %in_b) : ({sf}, {t(3 * E, E)}, {t(3 * E)}) -> {t(S, B, 3 * E)}
  %unflatten = pyop "unflatten"(%linear, -1, [3, {E}]) : ({t(S, B, 3 * E)}) -> {t(S, B, 3, E)}
  %unsqueeze = pyop "unsqueeze"(%unflatten, 0) : ({t(S, B, 3, E)}) -> {t(1, S, B, 3, E)}
  %transpose_1 = pyop "transpose"(%unsqueeze, 0, -2) : ({t(1, S, B, 3, E)}) -> {t(3, S, B, 1, E)}
  %squeeze = pyop "squeeze"(%transpose_1, -2) : ({t(3, S, B, 1, E)}) -> {t(3, S, B, E)}
  %contiguous = pyop "contiguous"(%squeeze) : ({t(3, S, B, E)}) -> {t(3, S, B, E)}
  %select = pyop "select"(%contiguous, 0, 0) : ({t(3, S, B, E)}) -> {sf}
  %select_1 = pyop "select"(%contiguous, 0, 1) : ({t(3, S, B, E)}) -> {sf}
  %select_2 = pyop "select"(%contiguous, 0, 2) : ({t(3, S, B, E)}) -> {sf}
  %view = pyop "view"(%select, [{S}, {B * H}, {D}]) : ({sf}) -> {bh}
  %transpose_2 = pyop "transpose"(%view, 0, 1) : ({bh}) -> {t(B * H, S, D)}
  %view_1 = pyop "view"(%select_1, [{S}, {B * H}, {D}]) : ({sf}) -> {bh}
  %transpose_3 = pyop "transpose"(%view_1, 0, 1) : ({bh}) -> {t(B * H, S, D)}
  %view_2 = pyop "view"(%select_2, [{S}, {B * H}, {D}]) : ({sf}) -> {bh}
  %transpose_4 = pyop "transpose"(%view_2, 0, 1) : ({bh}) -> {t(B * H, S, D)}
  %view_3 = pyop "view"(%transpose_2, [{B}, {H}, {S}, {D}]) : ({t(B * H, S, D)}) -> {t(B, H, S, D)}
  %view_4 = pyop "view"(%transpose_3, [{B}, {H}, {S}, {D}]) : ({t(B * H, S, D)}) -> {t(B, H, S, D)}
  %view_5 = pyop "view"(%transpose_4, [{B}, {H}, {S}, {D}]) : ({t(B * H, S, D)}) -> {t(B, H, S, D)}
  %sdpa = pyop "scaled_dot_product_attention"(%view_3, %view_4, %view_5) : ({t(B, H, S, D)}, {t(B, H, S, D)}, {t(B, H, S, D)}) -> {t(B, H, S, D)}
  %permute = pyop "permute"(%sdpa, [2, 0, 1, 3]) : ({t(B, H, S, D)}) -> {t(S, B, H, D)}
  %reshape = pyop "reshape"(%permute, [{S * B}, {E}]) : ({t(S, B, H, D)}) -> {t(S * B, E)}
  %linear_1 = pyop "linear"(%reshape, %out_w, %out_b) : ({t(S * B, E)}, {t(E, E)}, {t(E)}) -> {t(S * B, E)}
  %view_6 = pyop "view"(%linear_1, [{S}, {B}, {E}]) : ({t(S * B, E)}) -> {sf}
  %transpose_5 = pyop "transpose"(%view_6, 1, 0) : ({sf}) -> {t(B, S, E)}
  %dropout = pyop "dropout"(%transpose_5, 0.1, False) : ({t(B, S, E)}) -> {t(B, S, E)}
  %add = pyop "add"(%src, %dropout) : ({t(B, S, E)}, {t(B, S, E)}) -> {t(B, S, E)}
  %layer_norm = pyop "layer_norm"(%add, [{E}], %n1_w, %n1_b, 1.0e-05, False) : ({t(B, S, E)}, {t(E)}, {t(E)}) -> {t(B, S, E)}
  %linear_2 = pyop "linear"(%layer_norm, %l1_w, %l1_b) : ({t(B, S, E)}, {t(F, E)}, {t(F)}) -> {t(B, S, F)}
  %relu = pyop "relu"(%linear_2) : ({t(B, S, F)}) -> {t(B, S, F)}
  %dropout_1 = pyop "dropout"(%relu, 0.1, False) : ({t(B, S, F)}) -> {t(B, S, F)}
  %linear_3 = pyop "linear"(%dropout_1, %l2_w, %l2_b) : ({t(B, S, F)}, {t(E, F)}, {t(E)}) -> {t(B, S, E)}
  %dropout_2 = pyop "dropout"(%linear_3, 0.1, False) : ({t(B, S, E)}) -> {t(B, S, E)}
  %add_1 = pyop "add"(%layer_norm, %dropout_2) : ({t(B, S, E)}, {t(B, S, E)}) -> {t(B, S, E)}
  %layer_norm_1 = pyop "layer_norm"(%add_1, [{E}], %n2_w, %n2_b, 1.0e-05, False) : ({t(B, S, E)}, {t(E)}, {t(E)}) -> {t(B, S, E)}
  ret %layer_norm_1 : {t(B, S, E)}
}}
"""


def test_transformer_encoder_layer_as_exported():
    B, S, E, H, F = 2, 7, 32, 4, 64
    layer = torch.nn.TransformerEncoderLayer(E, H, F, dropout=0.1, batch_first=True).eval()
    x = torch.randn(B, S, E)
    with torch.no_grad():
        want = layer(x)
    check_graph(transformer_layer_export_graph(B, S, E, H, F), {"src": x},
                dict(layer.state_dict()), [want])


def test_transformer_export_graph_matches_torch_export():
    # The hand-written graph above is the op sequence torch.export records.
    B, S, E, H, F = 2, 7, 32, 4, 64
    layer = torch.nn.TransformerEncoderLayer(E, H, F, dropout=0.1, batch_first=True).eval()
    ep = torch.export.export(layer, (torch.randn(B, S, E),))
    exported = [n.target.__name__.split(".")[0] for n in ep.graph.nodes
                if n.op == "call_function"]
    text = transformer_layer_export_graph(B, S, E, H, F)
    written = [line.split('pyop "')[1].split('"')[0] for line in text.splitlines()
               if 'pyop "' in line]
    assert written == exported


class SmallCNN(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = torch.nn.Conv2d(3, 8, 3, padding=1)
        self.bn1 = torch.nn.BatchNorm2d(8)
        self.conv2 = torch.nn.Conv2d(8, 16, 3, stride=2)
        self.bn2 = torch.nn.BatchNorm2d(16)
        self.fc = torch.nn.Linear(16, 10)

    def forward(self, x):
        x = torch.nn.functional.max_pool2d(torch.relu(self.bn1(self.conv1(x))), 2)
        x = torch.relu(self.bn2(self.conv2(x)))
        x = torch.nn.functional.adaptive_avg_pool2d(x, (1, 1)).flatten(1)
        return torch.log_softmax(self.fc(x), -1)


def cnn_graph(N, training):
    tr = "True" if training else "False"
    p = lambda name, *shape: f'%{name.replace(".", "_")}: {t(*shape)} {{trace.param = "{name}"}}'
    params = ", ".join([
        p("conv1.weight", 8, 3, 3, 3), p("conv1.bias", 8),
        p("bn1.weight", 8), p("bn1.bias", 8), p("bn1.running_mean", 8), p("bn1.running_var", 8),
        p("conv2.weight", 16, 8, 3, 3), p("conv2.bias", 16),
        p("bn2.weight", 16), p("bn2.bias", 16), p("bn2.running_mean", 16), p("bn2.running_var", 16),
        p("fc.weight", 10, 16), p("fc.bias", 10)])
    rets = f"%y, %bn1_running_mean, %bn1_running_var" if training else "%y"
    ret_types = f"{t(N, 10)}, {t(8)}, {t(8)}" if training else t(N, 10)
    return f"""
trace.graph @cnn({params}, %x: {t(N, 3, 16, 16)} {{trace.input = "x", trace.donated}}) -> ({ret_types}) {{
  %c1 = pyop "conv2d"(%x, %conv1_weight, %conv1_bias, 1, 1) : ({t(N, 3, 16, 16)}, {t(8, 3, 3, 3)}, {t(8)}) -> {t(N, 8, 16, 16)}
  %b1 = pyop "batch_norm"(%c1, %bn1_weight, %bn1_bias, %bn1_running_mean, %bn1_running_var, {tr}, 0.1, 1.0e-05, False) : ({t(N, 8, 16, 16)}, {t(8)}, {t(8)}, {t(8)}, {t(8)}) -> {t(N, 8, 16, 16)}
  %r1 = pyop "relu"(%b1) : ({t(N, 8, 16, 16)}) -> {t(N, 8, 16, 16)}
  %m1 = pyop "max_pool2d"(%r1, (2, 2)) : ({t(N, 8, 16, 16)}) -> {t(N, 8, 8, 8)}
  %c2 = pyop "conv2d"(%m1, %conv2_weight, %conv2_bias, 2) : ({t(N, 8, 8, 8)}, {t(16, 8, 3, 3)}, {t(16)}) -> {t(N, 16, 3, 3)}
  %b2 = pyop "batch_norm"(%c2, %bn2_weight, %bn2_bias, %bn2_running_mean, %bn2_running_var, {tr}, 0.1, 1.0e-05, False) : ({t(N, 16, 3, 3)}, {t(16)}, {t(16)}, {t(16)}, {t(16)}) -> {t(N, 16, 3, 3)}
  %r2 = pyop "relu"(%b2) : ({t(N, 16, 3, 3)}) -> {t(N, 16, 3, 3)}
  %a = pyop "adaptive_avg_pool2d"(%r2, (1, 1)) : ({t(N, 16, 3, 3)}) -> {t(N, 16, 1, 1)}
  %f = pyop "flatten"(%a, 1) : ({t(N, 16, 1, 1)}) -> {t(N, 16)}
  %l = pyop "linear"(%f, %fc_weight, %fc_bias) : ({t(N, 16)}, {t(10, 16)}, {t(10)}) -> {t(N, 10)}
  %y = pyop "log_softmax"(%l, -1) : ({t(N, 10)}) -> {t(N, 10)}
  ret {rets} : {ret_types}
}}
"""


def test_cnn_batchnorm_eval():
    model = SmallCNN()
    with torch.no_grad():  # non-trivial running statistics
        for bn in (model.bn1, model.bn2):
            bn.running_mean.uniform_(-0.5, 0.5)
            bn.running_var.uniform_(0.5, 2.0)
    model.eval()
    x = torch.randn(4, 3, 16, 16)
    with torch.no_grad():
        want = model(x)
    params = {k: v for k, v in model.state_dict().items() if "num_batches" not in k}
    check_graph(cnn_graph(4, training=False), {"x": x}, params, [want])


def test_cnn_batchnorm_train():
    # Training mode: batch statistics, and running statistics updated in
    # place (returned here to compare).
    model = SmallCNN().train()
    x = torch.randn(4, 3, 16, 16)
    params = {k: v.clone() for k, v in model.state_dict().items() if "num_batches" not in k}
    with torch.no_grad():
        want = model(x)
    expected = [want, model.bn1.running_mean, model.bn1.running_var]
    check_graph(cnn_graph(4, training=True), {"x": x}, params, expected)


def word_lm_gru_graph(T, B, V, E, H):
    """torch.export.export(RNNModel(rnn_type="GRU").eval(), (tokens, h0))'s
    graph: embedding, dropout, gru.input (its weight list flattened in
    place), dropout, view, linear, view; dropout's train flag is False."""
    f, i64 = "f32", "i64"
    weights = []
    for l in range(2):
        weights += [(f"rnn.weight_ih_l{l}", (3 * H, E if l == 0 else H)),
                    (f"rnn.weight_hh_l{l}", (3 * H, H)),
                    (f"rnn.bias_ih_l{l}", (3 * H,)), (f"rnn.bias_hh_l{l}", (3 * H,))]
    wparams = ", ".join(f"%w{k}: {t(*shape)} {{trace.param = \"{name}\"}}"
                        for k, (name, shape) in enumerate(weights))
    wargs = ", ".join(f"%w{k}" for k in range(len(weights)))
    wtypes = ", ".join(t(*shape) for _, shape in weights)
    return f"""
trace.graph @word_lm_gru(%enc: {t(V, E)} {{trace.param = "encoder.weight"}}, {wparams},
    %dec_w: {t(V, H)} {{trace.param = "decoder.weight"}}, %dec_b: {t(V)} {{trace.param = "decoder.bias"}},
    %tokens: {t(T, B, dtype=i64)} {{trace.input = "tokens"}}, %hidden: {t(2, B, H)} {{trace.input = "hidden"}})
    -> ({t(T, B, V)}, {t(2, B, H)}) {{
  %emb = pyop "embedding"(%enc, %tokens) : ({t(V, E)}, {t(T, B, dtype=i64)}) -> {t(T, B, E)}
  %drop = pyop "dropout"(%emb, 0.2, False) : ({t(T, B, E)}) -> {t(T, B, E)}
  %gru:2 = pyop "gru"(%drop, %hidden, {wargs}, True, 2, 0.2, False, False, False)
      : ({t(T, B, E)}, {t(2, B, H)}, {wtypes}) -> ({t(T, B, H)}, {t(2, B, H)})
  %drop1 = pyop "dropout"(%gru#0, 0.2, False) : ({t(T, B, H)}) -> {t(T, B, H)}
  %flat = pyop "view"(%drop1, (-1, {H})) : ({t(T, B, H)}) -> {t(T * B, H)}
  %lin = pyop "linear"(%flat, %dec_w, %dec_b) : ({t(T * B, H)}, {t(V, H)}, {t(V)}) -> {t(T * B, V)}
  %out = pyop "view"(%lin, ({T}, {B}, -1)) : ({t(T * B, V)}) -> {t(T, B, V)}
  ret %out, %gru#1 : {t(T, B, V)}, {t(2, B, H)}
}}
"""


def word_lm_gru_case():
    """The PyTorch examples' word language model with rnn_type="GRU"
    (Embedding 10000 x 200, 2-layer GRU(200, 200, dropout=0.2), Linear
    200 -> 10000), in eval mode, on 35 x 20 tokens: (graph text, inputs,
    params, PyTorch's outputs)."""
    T, B, V, E, H = 35, 20, 10000, 200, 200
    torch.manual_seed(0)
    model = RNNModel(V, E, H, 2, 0.2, rnn_type="GRU").eval()
    g = torch.Generator().manual_seed(1)
    tokens = torch.randint(0, V, (T, B), generator=g)
    h0 = 0.5 * torch.randn(2, B, H, generator=g)
    with torch.no_grad():
        logits, hn = model(tokens, h0)
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    return (word_lm_gru_graph(T, B, V, E, H), {"tokens": tokens, "hidden": h0},
            params, [logits, hn])


def test_word_lm_gru_eval(device):
    text, inputs, params, expected = word_lm_gru_case()
    tol = dict(rtol=1e-3, atol=1e-4) if device == "cuda" else {}
    check_graph(text, inputs, params, expected, **tol)
