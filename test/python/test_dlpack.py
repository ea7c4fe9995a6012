"""Tensors cross into and out of a run through DLPack: inputs are read where
they lie (host memory with any strides, or a CUDA tensor on its device),
outputs hand over memory of their own. The CUDA half runs where torch and
TraceIR both see a GPU (the GPU bundle's Python path runs every case so)."""
import gc

import numpy as np
import pytest
import torch

import traceir
from traceir_testing import DEVICE

torch.manual_seed(0)


class Affine(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(4, 3)

    def forward(self, x, y):
        h = self.fc(x) + y
        return h, h > 0


def compiled(model, args, device=DEVICE):
    m = traceir.from_torch(model, args).run_passes("free-dead-tensors")
    return traceir.compile(m, device=device)


def test_strided_torch_inputs_are_read_with_their_strides():
    model = Affine().eval()
    x, y = torch.randn(5, 4), torch.randn(5, 3)
    exe = compiled(model, (x, y))
    views = [
        (torch.randn(4, 5).t(), torch.randn(5, 3)),       # transposed
        (torch.randn(1, 4).expand(5, 4), torch.randn(3).expand(5, 3)),  # stride 0
        (torch.randn(7, 4)[2:], torch.randn(5, 6)[:, ::2]),  # offset, step 2
    ]
    for a, b in views:
        assert not (a.is_contiguous() and b.is_contiguous())
        h, pos = exe(a, b)
        with torch.no_grad():
            want_h, want_pos = model(a, b)
        torch.testing.assert_close(h, want_h, rtol=1e-5, atol=1e-6)
        assert pos.dtype is torch.bool and torch.equal(pos, want_pos)


def test_outputs_own_their_memory():
    model = Affine().eval()
    x, y = torch.randn(5, 4), torch.randn(5, 3)
    exe = compiled(model, (x, y))
    h1, _ = exe(x, y)
    h2, _ = exe(x, y)
    assert h1.data_ptr() != h2.data_ptr()  # each run's outputs are its own
    expected = h1.clone()
    del exe
    gc.collect()  # the executable (and its allocator) is gone; h1 is not
    torch.testing.assert_close(h1, expected, rtol=0, atol=0)
    h1 += 1  # writable, like any torch result
    torch.testing.assert_close(h1, expected + 1, rtol=0, atol=0)


def test_numpy_in_numpy_out_and_bfloat16_through_dlpack():
    class Scale(torch.nn.Module):
        def forward(self, x):
            return x * 2

    x = torch.randn(2, 3)
    exe = compiled(Scale(), (x,))
    a = exe(x.numpy())
    assert isinstance(a, np.ndarray) and a.dtype == np.float32
    np.testing.assert_allclose(a, (x * 2).numpy(), rtol=0, atol=0)
    strided = np.asfortranarray(np.random.rand(2, 3).astype(np.float32))
    np.testing.assert_allclose(exe(strided), strided * 2, rtol=0, atol=0)
    # bfloat16, which numpy lacks, crosses as itself (DLPack has it).
    xb = torch.randn(3, 2).to(torch.bfloat16).t()
    exe = compiled(Scale(), (xb,))
    b = exe(xb)
    assert isinstance(b, torch.Tensor) and b.dtype is torch.bfloat16
    torch.testing.assert_close(b, xb * 2, rtol=0, atol=0)


def _cuda_ready():
    if not torch.cuda.is_available():
        return False, "torch sees no CUDA device"
    try:
        compiled(Affine().eval(), (torch.randn(5, 4), torch.randn(5, 3)), "cuda")
    except traceir.TraceIRError as e:
        return False, f"TraceIR cannot use cuda:0 ({e})"
    return True, ""


@pytest.fixture(scope="module")
def cuda():
    ready, why = _cuda_ready()
    if not ready:
        pytest.skip(f"DLPack CUDA exchange skipped: {why}")


def test_cuda_tensors_stay_on_the_device(cuda):
    model = Affine().eval().cuda()
    x, y = torch.randn(5, 4, device="cuda"), torch.randn(4, 5, device="cuda").t()
    exe = compiled(model, (x, y), "cuda")
    exe(x, y)  # warm: parameters uploaded, kernels loaded
    from torch.profiler import ProfilerActivity, profile
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        h, pos = exe(x, y)
        torch.cuda.synchronize()
    copies = [e.name for e in prof.events() if "Memcpy" in e.name and "DtoD" not in e.name]
    assert copies == [], copies  # no host round trip either way
    assert h.device == x.device and pos.device == x.device
    with torch.no_grad():
        want_h, want_pos = model(x, y)
    torch.testing.assert_close(h, want_h, rtol=1e-4, atol=1e-5)
    assert torch.equal(pos, want_pos)


def test_cuda_results_follow_work_on_torchs_stream(cuda):
    """An input written by a kernel on torch's current (non-default) stream
    is read after it: the DLPack capsule orders that stream first."""
    model = Affine().eval().cuda()
    x, y = torch.randn(5, 4, device="cuda"), torch.randn(5, 3, device="cuda")
    exe = compiled(model, (x, y), "cuda")
    side = torch.cuda.Stream()
    with torch.cuda.stream(side):
        big = torch.randn(4096, 4096, device="cuda")
        x2 = (big @ big)[:5, :4] * 0 + x  # long work, then x again
        h, _ = exe(x2, y)
    torch.cuda.synchronize()
    with torch.no_grad():
        want, _ = model(x, y)
    torch.testing.assert_close(h, want, rtol=1e-3, atol=1e-3)


def test_cuda_tensor_on_another_device_is_refused(cuda):
    if torch.cuda.device_count() < 2:
        pytest.skip("one CUDA device: nothing to mismatch")
    model = Affine().eval()
    exe = compiled(model, (torch.randn(5, 4), torch.randn(5, 3)), "cuda:0")
    with pytest.raises(traceir.TraceIRError, match="input 'x' is on cuda:1 but @.* runs on cuda:0"):
        exe(torch.randn(5, 4, device="cuda:1"), torch.randn(5, 3, device="cuda:0"))
