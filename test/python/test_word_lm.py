"""The bundled examples/word_lm.trace (PyTorch's word language model: a
2-layer LSTM, traced in 2017) against the same model built in PyTorch, on
the CPU and on CUDA (the `device` fixture of conftest.py; the cuda cases
skip, with one line saying why, where trace-run finds no CUDA device).

The trace was recorded in training mode (Dropout's and LSTM's train flags
are True); the comparison runs an eval copy of it, and the training trace is
checked for seeded determinism.
"""
import os
import re
import subprocess
import sys
import tempfile

import pytest
import torch

from traceir_testing import BIN, ROOT, reported_device, run_graph

sys.path.insert(0, os.path.join(ROOT, "examples"))
from word_lm_inputs import RNNModel  # noqa: E402  (the model the example runs)

TRACE = os.path.join(ROOT, "examples", "word_lm.trace")
NTOKEN, NINP, NHID, NLAYERS, BPTT, BATCH = 10000, 200, 200, 2, 35, 20


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


@pytest.fixture(scope="module")
def setup():
    torch.manual_seed(0)
    model = RNNModel()
    # Small uniform weights as in the example's init_weights, but keep the
    # LSTM's default init so its gates see a range of values.
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


def test_param_names_match_the_trace(setup):
    model, params, _, trace = setup
    declared = {name: shape for shape, name in
                re.findall(r"^param %\w+ : f32\[([\d,]+)\] (\S+)$", trace, re.M)}
    assert set(declared) == set(params)
    for name, shape in declared.items():
        assert list(params[name].shape) == [int(d) for d in shape.split(",")], name


def test_word_lm_eval_matches_pytorch(setup, device):
    model, params, inputs, trace = setup
    graph = import_anf(eval_trace_text(trace))
    model.eval()
    with torch.no_grad():
        logits, (hn, cn) = model(inputs["tokens"], (inputs["hidden.0"], inputs["hidden.1"]))

    freed, freed_report = run_graph(graph, inputs, params, free=True)
    kept, kept_report = run_graph(graph, inputs, params, free=False, check_frees=False)
    for outputs in (freed, kept):
        assert len(outputs) == 3
        for got, want in zip(outputs, (logits, hn, cn)):
            assert got.dtype == want.dtype and got.shape == want.shape
            torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)

    dev_freed = freed_report["devices"][0]
    dev_kept = kept_report["devices"][0]
    assert dev_freed["device"] == dev_kept["device"] == reported_device(), freed_report
    assert dev_freed["peak_bytes"] == dev_freed["predicted_peak_bytes"], freed_report
    assert dev_kept["peak_bytes"] == dev_kept["predicted_peak_bytes"], kept_report
    assert dev_freed["frees"] > 0
    assert dev_freed["peak_bytes"] < dev_kept["peak_bytes"], (freed_report, kept_report)


def test_word_lm_training_trace_is_seeded(setup, device):
    # The trace as recorded: embedding dropout, dropout between the LSTM's
    # layers and output dropout all draw from --seed.
    model, params, inputs, trace = setup
    graph = import_anf(trace)
    a, report = run_graph(graph, inputs, params, seed=3)
    b, _ = run_graph(graph, inputs, params, seed=3)
    c, _ = run_graph(graph, inputs, params, seed=4)
    for u, v in zip(a, b):
        assert torch.equal(u, v)
    for u, v in zip(a, c):
        assert not torch.equal(u, v)
    dev = report["devices"][0]
    assert dev["device"] == reported_device(), report
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], report
    # Training differs from eval.
    model.eval()
    with torch.no_grad():
        logits, _ = model(inputs["tokens"], (inputs["hidden.0"], inputs["hidden.1"]))
    assert not torch.allclose(a[0], logits, rtol=1e-4, atol=1e-5)
