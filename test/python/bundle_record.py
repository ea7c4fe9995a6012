"""Records the cases of the pytest tier into a GPU bundle
(scripts/gpu-bundle.sh): with TRACEIR_BUNDLE_DIR set, every graph a test
runs through run_graph, and every graph it compiles and calls through the
traceir package, becomes a case folder there:

    case.json            what the test ran: its id, the kind ("run", or
                         "error" with the message the CPU run gave), the
                         options (check_frees, seed, extra trace-run flags),
                         the tolerance
    cuda.trx, cpu.trx    the graph saved for each device (no GPU needed)
    inputs.safetensors, params.safetensors
    expected.safetensors PyTorch's outputs where the test gives them
                         (check_op), otherwise the CPU run's, which the test
                         itself compares with PyTorch

A case whose tensors would not fit the bundle (over BIG_CASE bytes) ships
its large floating-point tensors as seeds instead (case.json "generated":
name, dtype, shape, mean, std, seed), which run.sh draws with torch on the
GPU machine; its reference is then the runtime's CPU run there (the CPU
kernels are PyTorch-checked here), not a shipped expected file.

The tests still run on the CPU (so they pass or fail as they would); the GPU
machine runs the cases with bundle/run.sh.
"""
import hashlib
import json
import os
import shutil
import subprocess

import torch
from safetensors.torch import save_file

DIR = os.environ.get("TRACEIR_BUNDLE_DIR")
# TRACEIR_BUNDLE_ALONGSIDE=1: the tier runs as it does without a bundle (cpu
# cases run, cuda cases skip where there is no GPU) and its CPU runs are
# the cases. CI records its bundle this way during the release pytest
# instead of running the tier a second time; scripts/gpu-check.sh records
# every test, cuda-only ones included, the other way (REDIRECT: every run
# goes to the CPU and is saved for cuda).
ALONGSIDE = bool(DIR) and os.environ.get("TRACEIR_BUNDLE_ALONGSIDE") == "1"
REDIRECT = bool(DIR) and not ALONGSIDE
# Whether the running test's runs are cases (conftest.py clears it for the
# tests TRACEIR_BUNDLE_IGNORE names and for cpu-only tests).
test_recorded = True


# Set by a device-error test (test_device_errors.py) around its failing
# run: the inputs of a good run of the same executable, and its outputs.
# The error case then carries them, and the GPU machine checks that the run
# fails with the CPU's message and that the executable then runs them
# (scripts/bundle/run_cases.py), i.e. that the device's error record names
# the op and is cleared for the next run.
recovery = None


def expect_recovery(inputs, outputs):
    global recovery
    recovery = None if inputs is None else (inputs, outputs)


def recording(device):
    """Whether a run on `device` ("cpu", "cuda", ...) becomes a case."""
    if REDIRECT:
        return True
    return ALONGSIDE and test_recorded and device == "cpu"
# Set by check_op around its run: PyTorch's outputs and the test's
# tolerance for the case being recorded.
expectation = None
DEFAULT_RTOL, DEFAULT_ATOL = 1e-4, 1e-5
BIG_CASE = 512 * 1024  # bytes of inputs, params and outputs in one case
BIG_TENSOR = 16 * 1024  # what a big case generates instead of shipping


def _nbytes(tensors):
    return sum(t.numel() * t.element_size() for t in (tensors or {}).values())


def _spill(meta, kind, tensors):
    """Replaces the big floating-point tensors of a big case by seeds."""
    kept = {}
    for name, t in (tensors or {}).items():
        if t.is_floating_point() and t.numel() * t.element_size() > BIG_TENSOR:
            f = t.detach().double()
            meta.setdefault("generated", []).append(
                {"kind": kind, "name": name, "dtype": str(t.dtype).removeprefix("torch."),
                 "shape": list(t.shape), "mean": f.mean().item(),
                 "std": f.std().item() if t.numel() > 1 else 0.0,
                 "seed": len(meta.get("generated", []))})
        else:
            kept[name] = t
    return kept


def _test_id():
    return os.environ.get("PYTEST_CURRENT_TEST", "?").rsplit(" (", 1)[0]


def _save(path, tensors):
    if tensors:
        save_file({k: v.detach().contiguous().clone().cpu() for k, v in tensors.items()}, path)


def case_dir(key):
    """A fresh folder for a case keyed by its content (or None if it exists:
    parametrized tests repeat cases)."""
    digest = hashlib.sha1(key).hexdigest()[:16]
    path = os.path.join(DIR, digest)
    try:
        os.makedirs(path)  # fails where it exists, also for a parallel worker's
    except FileExistsError:
        return None
    return path


def _key(text, inputs, params, seed, extra):
    h = hashlib.sha1(text.encode())
    for tensors in (inputs or {}, params or {}):
        for k in sorted(tensors):
            h.update(k.encode())
            # Bytes through uint8: numpy has no bfloat16.
            t = tensors[k].detach().cpu().contiguous().reshape(-1)
            h.update(t.view(torch.uint8).numpy().tobytes())
    h.update(repr((seed, list(extra))).encode())
    return h.digest()


def record_graph(bin_dir, freed_path, text, inputs, params, check_frees, device, seed, extra,
                 run_cpu):
    """Records one run_graph call; `run_cpu(save_path)` runs it on the CPU
    saving cpu.trx and returns (outputs, report) or raises the run's error."""
    path = case_dir(_key(text, inputs, params, seed, extra))
    if path is None:
        return run_cpu(None, [a for a in extra if a != "--compile-gpu-kernels"])
    # The generated kernels' flags are the cuda file's (compiled here for
    # sm_90, the GPU machine's chip); the CPU run goes without them.
    generated = "--compile-gpu-kernels" in extra or "--gpu-binary" in extra
    cpu_extra = []
    skip = False
    for a in extra:
        if skip:
            skip = False
        elif a == "--gpu-binary":
            skip = True
        elif a not in ("--compile-gpu-kernels", "--print-kernel-plan"):
            cpu_extra.append(a)
    meta = {"test": _test_id(), "device": device, "check_frees": check_frees, "seed": seed,
            "extra": cpu_extra, "source": "trace-run", "generated_kernels": generated}
    emit = subprocess.run([os.path.join(bin_dir, "trace-translate"), freed_path,
                           "--emit-executable", "--device", "cuda",
                           *(["--generated-kernels", "--chip", "sm_90"] if generated else []),
                           "-o", os.path.join(path, "cuda.trx")],
                          capture_output=True, text=True)
    if emit.returncode != 0:
        meta["cuda_build_error"] = emit.stderr.strip()
    big = _nbytes(inputs) + _nbytes(params) > BIG_CASE
    if big:
        inputs, params = _spill(meta, "input", inputs), _spill(meta, "param", params)
    _save(os.path.join(path, "inputs.safetensors"), inputs)
    _save(os.path.join(path, "params.safetensors"), params)
    try:
        outputs, report = run_cpu(os.path.join(path, "cpu.trx"), cpu_extra)
    except Exception as e:
        meta["kind"] = "error"
        meta["error"] = str(e)
        if recovery is not None:
            good, want = recovery
            _save(os.path.join(path, "recover-inputs.safetensors"), good)
            _save(os.path.join(path, "recover-expected.safetensors"),
                  {f"output{i}": v for i, v in enumerate(want)})
            meta["recover"] = True
        _finish(path, meta)
        raise
    meta["kind"] = "run"
    _expect(path, meta, outputs)
    _finish(path, meta)
    return outputs, report


def _expect(path, meta, outputs):
    global expectation
    rtol, atol = DEFAULT_RTOL, DEFAULT_ATOL
    meta["outputs"] = len(outputs)
    if "generated" in meta or _nbytes({str(i): o for i, o in enumerate(outputs)}) > BIG_CASE:
        # Drawn or too big to ship: the reference is the CPU run there.
        meta["expected_from"] = "the runtime's CPU run on the GPU machine"
        meta["rtol"], meta["atol"] = 1e-3, 1e-4
        return
    values = outputs
    if expectation is not None:
        want, rtol, atol = expectation
        if len(want) == len(outputs) and all(w.shape == o.shape and w.dtype == o.dtype
                                             for w, o in zip(want, outputs)):
            values = want
            meta["expected_from"] = "pytorch"
    meta.setdefault("expected_from", "cpu run")
    meta["rtol"], meta["atol"] = max(rtol, DEFAULT_RTOL), max(atol, DEFAULT_ATOL)
    meta["outputs"] = len(values)
    _save(os.path.join(path, "expected.safetensors"),
          {f"output{i}": v for i, v in enumerate(values)})


def _finish(path, meta):
    if "kind" not in meta:
        shutil.rmtree(path)
        return
    with open(os.path.join(path, "case.json"), "w") as f:
        json.dump(meta, f, indent=1)


def record_compiled(compiled, args_by_name, outputs, generated=False):
    """Records one call of a CompiledGraph (the traceir package's path)."""
    module = compiled.module
    if module is None:
        return
    inputs = {n: (a if isinstance(a, torch.Tensor) else torch.from_numpy(a))
              for n, a in args_by_name.items()}
    params = {n: (v if isinstance(v, torch.Tensor) else torch.from_numpy(v))
              for n, v in module.params.items()}
    outs = list(outputs) if isinstance(outputs, (list, tuple)) else [outputs]
    if not all(isinstance(o, torch.Tensor) or hasattr(o, "dtype") for o in outs):
        return
    path = case_dir(_key(module.text, inputs, params, compiled.seed, ()))
    if path is None:
        return
    meta = {"test": _test_id(), "device": "cuda", "check_frees": compiled.check_frees,
            "seed": compiled.seed, "extra": [], "source": "traceir.compile",
            "generated_kernels": generated}
    try:
        module.save_executable(os.path.join(path, "cuda.trx"), device="cuda",
                               gpu_kernels="compile" if generated else None)
    except Exception as e:
        meta["cuda_build_error"] = str(e)
    try:
        module.save_executable(os.path.join(path, "cpu.trx"), device="cpu")
    except Exception:
        shutil.rmtree(path)
        return
    if _nbytes(inputs) + _nbytes(params) > BIG_CASE:
        inputs, params = _spill(meta, "input", inputs), _spill(meta, "param", params)
    _save(os.path.join(path, "inputs.safetensors"), inputs)
    _save(os.path.join(path, "params.safetensors"), params)
    meta["kind"] = "run"
    _expect(path, meta, [o if isinstance(o, torch.Tensor) else torch.from_numpy(o) for o in outs])
    _finish(path, meta)
