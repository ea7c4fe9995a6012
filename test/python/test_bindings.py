"""The traceir Python package: import PyTorch models (torch.export), print
and re-parse, run passes, execute against PyTorch eager, profile, report
memory, save, and every error path as a clear Python exception.
"""
import copy
import json
import os
import subprocess
import sys
import tempfile

import numpy as np
import pytest
import torch

import traceir
from trace_validator import validate
from traceir_testing import BIN, DEVICE, ROOT

sys.path.insert(0, os.path.join(ROOT, "examples"))
from word_lm_inputs import RNNModel  # noqa: E402

torch.manual_seed(0)


class MLP(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x):
        return torch.log_softmax(self.fc2(torch.relu(self.fc1(x))), -1)


def small_cnn():
    return torch.nn.Sequential(
        torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(8, 16, 3, stride=2), torch.nn.BatchNorm2d(16),
        torch.nn.ReLU(), torch.nn.AdaptiveAvgPool2d((1, 1)), torch.nn.Flatten(),
        torch.nn.Linear(16, 10))


def compiled(model, args, passes="free-dead-tensors", method="export"):
    m = traceir.from_torch(model, args, method=method)
    if passes:
        m = m.run_passes(passes)
    return m, traceir.compile(m, device=DEVICE)


def check_report(exe):
    dev = exe.memory_report()["devices"][0]
    assert dev["peak_bytes"] == dev["predicted_peak_bytes"], dev
    return dev


METHODS = ["export", "jit"]


@pytest.mark.parametrize("method", METHODS)
def test_mlp_matches_eager_and_keeps_names(method):
    model, x = MLP().eval(), torch.randn(5, 8)
    m, exe = compiled(model, (x,), method=method)
    text = str(m)
    assert '{trace.param = "fc1.weight"}' in text and '{trace.input = "x"}' in text
    assert sorted(exe.param_names) == ["fc1.bias", "fc1.weight", "fc2.bias", "fc2.weight"]
    with torch.no_grad():
        torch.testing.assert_close(exe(x), model(x), rtol=1e-5, atol=1e-6)
    assert check_report(exe)["frees"] == 3


@pytest.mark.parametrize("method", METHODS)
def test_locations_point_at_the_users_code(method):
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),), method=method)
    forward_line = next(i for i, l in enumerate(open(__file__), 1)
                        if "return torch.log_softmax(self.fc2" in l)
    assert f'"{__file__}":{forward_line}:0' in str(m)
    if method == "export":  # the module path too
        assert '"fc1 (Linear)"' in str(m)


@pytest.mark.parametrize("method", METHODS)
@pytest.mark.parametrize("mode", ["eval", "train"])
def test_cnn_with_batchnorm(mode, method):
    torch.manual_seed(1)
    ref = getattr(small_cnn(), mode)()
    x = torch.randn(4, 3, 12, 12)
    _, exe = compiled(copy.deepcopy(ref), (x,), method=method)
    got = exe(x)
    with torch.no_grad():
        want = ref(x)
    torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    check_report(exe)
    # Training updates the running statistics in place, as PyTorch does.
    state, want_state = exe.state_dict(), ref.state_dict()
    for name, value in state.items():
        torch.testing.assert_close(value, want_state[name], rtol=1e-5, atol=1e-6)
    assert "1.running_mean" in state


@pytest.fixture(scope="module")
def word_lm():
    torch.manual_seed(0)
    model = RNNModel().eval()
    tokens = torch.randint(0, 10000, (35, 20))
    hidden = (0.5 * torch.randn(2, 20, 200), 0.5 * torch.randn(2, 20, 200))
    return model, tokens, hidden


@pytest.mark.parametrize("method", METHODS)
def test_word_lm_lstm(word_lm, method):
    model, tokens, hidden = word_lm
    m, exe = compiled(model, (tokens, hidden), method=method)
    assert exe.input_names == ["tokens", "hidden.0", "hidden.1"]
    out, (h, c) = exe(tokens, hidden)  # nested like the model's own output
    with torch.no_grad():
        wout, (wh, wc) = model(tokens, hidden)
    for got, want in ((out, wout), (h, wh), (c, wc)):
        torch.testing.assert_close(got, want, rtol=1e-4, atol=1e-5)
    check_report(exe)


@pytest.mark.parametrize("method", METHODS)
def test_transformer_encoder_layer(method):
    torch.manual_seed(2)
    layer = torch.nn.TransformerEncoderLayer(32, 4, 64, dropout=0.1, batch_first=True).eval()
    x = torch.randn(2, 7, 32)
    m, exe = compiled(layer, (x,), method=method)
    assert 'pyop "scaled_dot_product_attention"' in str(m)
    with torch.no_grad():
        torch.testing.assert_close(exe(x), layer(x), rtol=1e-4, atol=1e-5)
    check_report(exe)


class TrainStep(torch.nn.Module):
    """An MLP's training step: the loss first, as aot_autograd wants it."""

    def __init__(self):
        super().__init__()
        self.fc1 = torch.nn.Linear(8, 16)
        self.fc2 = torch.nn.Linear(16, 4)

    def forward(self, x, y):
        return (torch.nn.functional.cross_entropy(self.fc2(torch.relu(self.fc1(x))), y),)


def test_training_step_backward_graph():
    torch.manual_seed(3)
    model, x, y = TrainStep(), torch.randn(6, 8), torch.tensor([1, 3, 0, 2, 1, 3])
    m, exe = compiled(model, (x, y), method="joint")
    assert 'pyop "threshold_backward"' in str(m) and 'pyop "nll_loss_backward"' in str(m)
    loss, *grads = exe(x, y)
    want = model(x, y)[0]
    want.backward()
    torch.testing.assert_close(loss, want.detach(), rtol=1e-5, atol=1e-6)
    assert len(grads) == 4
    for g, p in zip(grads, model.parameters()):
        torch.testing.assert_close(g, p.grad, rtol=1e-5, atol=1e-6)
    check_report(exe)


@pytest.mark.parametrize("method", METHODS)
def test_word_lm_gru(method):
    torch.manual_seed(4)
    model = RNNModel(rnn_type="GRU").eval()
    tokens = torch.randint(0, 10000, (35, 20))
    hidden = 0.5 * torch.randn(2, 20, 200)
    m, exe = compiled(model, (tokens, hidden), method=method)
    assert 'pyop "gru"' in str(m)
    out, h = exe(tokens, hidden)
    with torch.no_grad():
        wout, wh = model(tokens, hidden)
    torch.testing.assert_close(out, wout, rtol=1e-4, atol=1e-5)
    torch.testing.assert_close(h, wh, rtol=1e-4, atol=1e-5)
    check_report(exe)


@pytest.mark.parametrize("name", ["mlp", "cnn", "lstm", "gru"])
def test_decomposed_core_aten_forms(name):
    """run_decompositions() turns linear into permute + addmm, conv2d into
    convolution, batch_norm into _native_batch_norm_legit_no_training,
    log_softmax into _log_softmax and lstm/gru into their cells with
    split_with_sizes: all map onto the registry's ops."""
    torch.manual_seed(5)
    tokens = torch.randint(0, 10000, (35, 20))
    model, args = {
        "mlp": lambda: (MLP().eval(), (torch.randn(3, 8),)),
        "cnn": lambda: (small_cnn().eval(), (torch.randn(2, 3, 12, 12),)),
        "lstm": lambda: (RNNModel().eval(), (tokens, (torch.randn(2, 20, 200), torch.randn(2, 20, 200)))),
        "gru": lambda: (RNNModel(rnn_type="GRU").eval(), (tokens, torch.randn(2, 20, 200))),
    }[name]()
    m = traceir.from_torch(model, args, decompose=True).run_passes("free-dead-tensors")
    assert 'pyop "addmm"' in str(m)
    exe = traceir.compile(m, device=DEVICE)
    from torch.utils._pytree import tree_flatten
    with torch.no_grad():
        want = tree_flatten(model(*args))[0]
    got = tree_flatten(exe(*args))[0]
    assert len(got) == len(want)
    for g, w_ in zip(got, want):
        torch.testing.assert_close(g, w_, rtol=1e-4, atol=1e-5)
    check_report(exe)


def test_text_round_trips():
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),)).run_passes("free-dead-tensors")
    again = traceir.Module.parse(str(m))
    assert str(again) == str(m)
    with tempfile.TemporaryDirectory() as d:
        m.save(os.path.join(d, "m.mlir"))
        assert str(traceir.Module.load(os.path.join(d, "m.mlir"))) == str(m)


def test_passes():
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),))
    assert "free %" not in str(m)
    before = m.clone()
    freed = m.run_passes("canonicalize,cse,free-dead-tensors")
    assert freed is m  # in place, as MLIR's pass manager and fx passes work
    assert str(freed).count("free %") == 3
    assert "free %" not in str(before)
    assert before.params is not m.params and before.params.keys() == m.params.keys()
    # Idempotent, like the pass.
    text = str(m)
    assert str(m.run_passes("free-dead-tensors")) == text


def test_numpy_in_numpy_out():
    model, x = MLP().eval(), torch.randn(3, 8)
    _, exe = compiled(model, (x,))
    out = exe(x.numpy())
    assert isinstance(out, np.ndarray) and out.dtype == np.float32
    with torch.no_grad():
        np.testing.assert_allclose(out, model(x).numpy(), rtol=1e-5, atol=1e-6)
    assert isinstance(exe(x=x), torch.Tensor)


def test_profile_from_python():
    model, x = MLP().eval(), torch.randn(3, 8)
    _, exe = compiled(model, (x,))
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "trace.json")
        with traceir.profile(path) as prof:
            exe(x)
            exe(x)
        with open(path) as f:
            trace = json.load(f)
    assert not validate(trace), validate(trace)
    ops = [e for e in trace["traceEvents"] if e.get("cat") == "cpu_op"]
    assert [e["name"] for e in ops] == ["linear", "relu", "linear", "log_softmax"] * 2
    assert "test_bindings.py" in ops[0]["args"]["location"]
    table = prof.summary()
    assert table.splitlines()[0].split()[:2] == ["op", "calls"]
    assert any(l.split()[:2] == ["linear", "4"] for l in table.splitlines())
    # In memory, without a file.
    with traceir.profile() as prof:
        exe(x)
    assert not validate(prof.trace())


def test_import_anf_and_run_the_saved_files():
    with open(os.path.join(ROOT, "examples", "word_lm.trace")) as f:
        m = traceir.import_anf(f.read(), "word_lm.trace")
    assert '%encoder.weight' in str(m)
    mlp, x = MLP().eval(), torch.randn(2, 8)
    m = traceir.from_torch(mlp, (x,)).run_passes("free-dead-tensors")
    from safetensors.torch import load_file, save_file
    with tempfile.TemporaryDirectory() as d:
        m.save(os.path.join(d, "m.mlir"))
        m.save_params(os.path.join(d, "w.safetensors"))
        save_file({"x": x}, os.path.join(d, "in.safetensors"))
        subprocess.run([os.path.join(BIN, "trace-run"), os.path.join(d, "m.mlir"),
                        "--params", os.path.join(d, "w.safetensors"),
                        "--inputs", os.path.join(d, "in.safetensors"),
                        "--outputs", os.path.join(d, "out.safetensors")], check=True)
        got = load_file(os.path.join(d, "out.safetensors"))["output0"]
    with torch.no_grad():
        torch.testing.assert_close(got, mlp(x), rtol=1e-5, atol=1e-6)


# Errors: each a clear Python exception, never a crash.
def test_bad_inputs():
    model, x = MLP().eval(), torch.randn(3, 8)
    _, exe = compiled(model, (x,))
    with pytest.raises(TypeError, match="input 'x': expected a torch.Tensor or a numpy.ndarray, got list"):
        exe([[1.0] * 8] * 3)
    with pytest.raises(traceir.TraceIRError, match=r"input 'x' is f32\[4, 8\] but the graph expects f32\[3, 8\]"):
        exe(torch.randn(4, 8))
    with pytest.raises(traceir.TraceIRError, match="input 'x' is f64"):
        exe(torch.randn(3, 8, dtype=torch.float64))
    with pytest.raises(TypeError, match="takes 1 input"):
        exe(x, x)
    with pytest.raises(TypeError, match="missing input: x"):
        exe()
    with pytest.raises(TypeError, match="unknown input 'y'"):
        exe(y=x)


def test_unknown_op_is_kept_and_named_at_run_time():
    class Logcumsumexp(torch.nn.Module):
        def forward(self, x):
            return torch.logcumsumexp(x, 0) * 2
    m = traceir.from_torch(Logcumsumexp(), (torch.randn(4),))
    assert 'pyop "logcumsumexp"(%x, 0)' in str(m)
    with pytest.raises(traceir.TraceIRError,
                       match=r"no kernel for op 'logcumsumexp' on cpu \(at .*test_bindings.py"):
        traceir.compile(m)


def test_bad_pipeline_device_text_and_arguments():
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),))
    with pytest.raises(traceir.TraceIRError, match="bad pass pipeline 'no-such-pass'"):
        m.run_passes("no-such-pass")
    with pytest.raises(traceir.TraceIRError, match="bad pass pipeline"):
        m.run_passes("canonicalize(")
    with pytest.raises(traceir.TraceIRError, match="unknown device 'tpu'"):
        traceir.compile(m, device="tpu")
    with pytest.raises(traceir.TraceIRError, match=r"<string>:1:\d+: error"):
        traceir.Module.parse("trace.graph @g( {")
    with pytest.raises(TypeError, match="takes a torch.nn.Module"):
        traceir.from_torch(lambda x: x, (torch.randn(2),))
    with pytest.raises(TypeError, match="example inputs as a tuple"):
        traceir.from_torch(MLP(), torch.randn(2, 8))
    with pytest.raises(ValueError, match="unknown import method 'fx'"):
        traceir.from_torch(MLP(), (torch.randn(2, 8),), method="fx")
    missing = traceir.Module(str(m), {})
    with pytest.raises(traceir.TraceIRError, match="missing parameters 'fc1.weight', 'fc1.bias'"):
        traceir.compile(missing)


def test_cuda_fallback_is_explicit():
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),))
    try:
        exe = traceir.compile(m, device="cuda")
    except traceir.TraceIRError as e:
        assert "no CUDA device" in str(e)
        with pytest.warns(RuntimeWarning, match="cuda unavailable .* running on the CPU instead"):
            exe = traceir.compile(m, device="cuda", fallback=True)
        assert exe.device == "cpu"
    else:
        assert exe.device == "cuda:0"


def test_gpu_kernels_arguments(tmp_path):
    # What needs no GPU: generated kernels run on CUDA only, a file that is
    # not a fatbin is named, a wrong type is refused; and without a GPU,
    # fallback=True still falls back to the CPU (and its own kernels).
    m = traceir.from_torch(MLP().eval(), (torch.randn(2, 8),))
    with pytest.raises(traceir.TraceIRError, match="generated GPU kernels run on a CUDA device, not on cpu"):
        traceir.compile(m, device="cpu", gpu_kernels="compile")
    bogus = tmp_path / "model.fatbin"
    bogus.write_bytes(b"not a fatbin")
    with pytest.raises(traceir.TraceIRError, match="is not a CUDA fatbin"):
        traceir.compile(m, device="cuda", gpu_kernels=bogus)
    with pytest.raises(traceir.TraceIRError, match="cannot read GPU binary"):
        traceir.compile(m, device="cuda", gpu_kernels=str(tmp_path / "missing.fatbin"))
    with pytest.raises(TypeError, match="gpu_kernels must be None"):
        traceir.compile(m, device="cuda", gpu_kernels=3)
    try:
        exe = traceir.compile(m, device="cuda", gpu_kernels="compile")
    except traceir.TraceIRError as e:
        assert "no CUDA device" in str(e)
        with pytest.warns(RuntimeWarning, match="running on the CPU instead"):
            exe = traceir.compile(m, device="cuda", fallback=True, gpu_kernels="compile")
        assert exe.device == "cpu"
    x = torch.randn(2, 8)
    torch.testing.assert_close(exe(x), traceir.compile(m, device=exe.device)(x), rtol=1e-4, atol=1e-5)


def test_save_params_writes_nothing_on_error():
    m = traceir.Module(str(traceir.from_torch(MLP().eval(), (torch.randn(2, 8),))),
                       {"fc1.weight": "not a tensor"})
    with tempfile.TemporaryDirectory() as d:
        with pytest.raises(TypeError, match="param 'fc1.weight'"):
            m.save_params(os.path.join(d, "w.safetensors"))
        assert os.listdir(d) == []
