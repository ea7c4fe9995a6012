"""Whole-graph cases (graph text, inputs, parameters from a PyTorch model)
shared by test_generated_kernels.py and bench/lowering_bench.py."""
import torch

import test_graphs

MLP_TEXT = """
trace.graph @mlp(%w0: tensor<64x32xf32> {trace.param = "0_weight"}, %b0: tensor<64xf32> {trace.param = "0_bias"},
                 %w2: tensor<10x64xf32> {trace.param = "2_weight"}, %b2: tensor<10xf32> {trace.param = "2_bias"},
                 %x: tensor<8x32xf32> {trace.input = "x"}) -> tensor<8x10xf32> {
  %0 = pyop "linear"(%x, %w0, %b0) : (tensor<8x32xf32>, tensor<64x32xf32>, tensor<64xf32>) -> tensor<8x64xf32>
  %1 = pyop "gelu"(%0) : (tensor<8x64xf32>) -> tensor<8x64xf32>
  %2 = pyop "linear"(%1, %w2, %b2) : (tensor<8x64xf32>, tensor<10x64xf32>, tensor<10xf32>) -> tensor<8x10xf32>
  %3 = pyop "log_softmax"(%2, -1) : (tensor<8x10xf32>) -> tensor<8x10xf32>
  ret %3 : tensor<8x10xf32>
}
"""


def mlp():
    model = torch.nn.Sequential(torch.nn.Linear(32, 64), torch.nn.GELU(), torch.nn.Linear(64, 10),
                                torch.nn.LogSoftmax(-1))
    sd = {k.replace(".", "_"): v for k, v in model.state_dict().items()}
    return MLP_TEXT, {"x": torch.randn(8, 32)}, sd


def _transformer(graph):
    """nn.TransformerEncoderLayer (eval) as `graph` writes it: the
    hand-written form or torch.export's; the parameters are the same."""
    B, S, E, H, F = 2, 7, 32, 4, 64
    layer = torch.nn.TransformerEncoderLayer(E, H, F, dropout=0.1, batch_first=True).eval()
    return graph(B, S, E, H, F), {"src": torch.randn(B, S, E)}, dict(layer.state_dict())


def transformer():
    return _transformer(test_graphs.transformer_layer_graph)


def cnn():
    model = test_graphs.SmallCNN().eval()
    params = {k: v for k, v in model.state_dict().items() if "num_batches" not in k}
    return test_graphs.cnn_graph(4, training=False), {"x": torch.randn(4, 3, 16, 16)}, params


def transformer_export():
    return _transformer(test_graphs.transformer_layer_export_graph)


def word_lm_gru():
    text, inputs, params, _ = test_graphs.word_lm_gru_case()
    return text, inputs, params


def word_lm_lstm():
    """The bundled 2017 trace in eval form, with the example model's
    weights (as test_word_lm.py builds them)."""
    import test_word_lm as w
    torch.manual_seed(0)
    model = w.RNNModel()
    params = {k: v.detach().clone() for k, v in model.state_dict().items()}
    g = torch.Generator().manual_seed(1)
    inputs = {"tokens": torch.randint(0, w.NTOKEN, (w.BPTT, w.BATCH), generator=g),
              "hidden.0": 0.5 * torch.randn(w.NLAYERS, w.BATCH, w.NHID, generator=g),
              "hidden.1": 0.5 * torch.randn(w.NLAYERS, w.BATCH, w.NHID, generator=g)}
    with open(w.TRACE) as f:
        text = w.import_anf(w.eval_trace_text(f.read()))
    return text, inputs, params


GRAPHS = {"mlp": mlp, "transformer": transformer, "transformer_export": transformer_export, "cnn": cnn,
          "word_lm_gru": word_lm_gru, "word_lm_lstm": word_lm_lstm}
