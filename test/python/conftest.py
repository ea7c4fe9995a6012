import os
import sys

import pytest
import torch

# traceir_testing lives beside the tests; the traceir package is built into
# $TRACEIR_BUILD/python (default build/python).
HERE = os.path.dirname(__file__)
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.environ.get(
    "TRACEIR_BUILD", os.path.join(HERE, "..", "..", "build")), "python"))

# Text -> objects -> text, for every module a test compiles: rebuilt node by
# node from what walking it reads (traceir.ir), it prints the same (see
# ir_roundtrip.py; traceir_testing checks the graphs it runs the same way).
import traceir as _traceir  # noqa: E402

if _traceir.HAS_COMPILER:
    import ir_roundtrip

    _compiled_init = _traceir.CompiledGraph.__init__

    def _checked_init(self, module, *args, **kwargs):
        if module is not None:
            ir_roundtrip.check_round_trip(module)
        _compiled_init(self, module, *args, **kwargs)

    _traceir.CompiledGraph.__init__ = _checked_init

# TRACEIR_ROUNDTRIP=1: every graph a test compiles is saved as a .trx file
# and loaded back before it runs, so the whole suite checks that saved
# executables run as the ones built here do (scripts/test.sh runs the tier
# this way once more).
if os.environ.get("TRACEIR_ROUNDTRIP") == "1":
    import tempfile

    import traceir

    _build = traceir.CompiledGraph.__init__

    def _roundtrip_init(self, module, device, graph="", gpu_kernels=None, _native=None,
                        _params=None):
        _build(self, module, device, graph, gpu_kernels, _native, _params)
        if _native is not None:
            return
        with tempfile.TemporaryDirectory() as d:
            path = os.path.join(d, "graph.trx")
            self.save(path)
            self._exe = traceir._traceir.Executable.load(path, "")
        self._exe.load_params([(n, traceir._host_array(n, module.params[n], "param")[0])
                               for n in self._exe.param_names])

    traceir.CompiledGraph.__init__ = _roundtrip_init

# TRACEIR_BUNDLE_DIR: recording a GPU bundle (bundle_record.py); calls of
# compiled graphs are cases too.
import bundle_record  # noqa: E402

if bundle_record.DIR:
    import traceir

    _call = traceir.CompiledGraph.__call__
    _init = traceir.CompiledGraph.__init__

    def _recording_init(self, module, device, graph="", gpu_kernels=None, _native=None,
                        _params=None):
        # Built for the CPU here; the case's cuda file is saved at the call.
        self._record_generated = gpu_kernels is not None
        if bundle_record.REDIRECT and device is not None and device.startswith("cuda"):
            device, gpu_kernels = "cpu", None
        _init(self, module, device, graph, gpu_kernels, _native, _params)

    def _recording_call(self, *args, **kwargs):
        outputs = _call(self, *args, **kwargs)
        if not bundle_record.recording(self.device):
            return outputs
        try:
            bound = self._bind(args, kwargs) if (kwargs or len(args) != len(self.input_names)) \
                else list(args)
            bundle_record.record_compiled(self, dict(zip(self.input_names, bound)), outputs,
                                          self._record_generated)
        except Exception:
            pass  # a call the recorder cannot describe is not a case
        return outputs

    traceir.CompiledGraph.__init__ = _recording_init
    traceir.CompiledGraph.__call__ = _recording_call

# Kernel tests run once per device: a test taking the `device` fixture (or in
# a module with pytestmark = pytest.mark.usefixtures("device")) runs on "cpu"
# and on "cuda", and run_graph and check_op default to its device
# (traceir_testing.DEVICE). @pytest.mark.devices("cuda"), on a test or on one
# of its parameters (pytest.param(..., marks=...)), keeps it to the devices
# named: the others are deselected. Where trace-run finds no CUDA device the
# cuda cases skip, all with the one line below. Recording a GPU bundle, every
# run goes to the CPU and is saved for cuda (bundle_record.py), so there each
# test runs once, as its cuda case.
import traceir_testing  # noqa: E402

DEVICES = ("cuda",) if bundle_record.REDIRECT else ("cpu", "cuda")
# TRACEIR_BUNDLE_IGNORE: the tests whose runs are not recorded while
# recording alongside the tier, space-separated prefixes of FILE::TEST ids
# (test_opinfo.py, test_x.py::test_y).
BUNDLE_IGNORE = tuple(os.environ.get("TRACEIR_BUNDLE_IGNORE", "").split())


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "devices(*names): the devices a test (or a parameter) taking `device` "
        "runs on; default cpu and cuda")


def pytest_generate_tests(metafunc):
    if "device" in metafunc.fixturenames:
        metafunc.parametrize("device", DEVICES, indirect=True)


def pytest_collection_modifyitems(config, items):
    def wanted(item):
        callspec = getattr(item, "callspec", None)
        device = callspec.params.get("device") if callspec else None
        return device is None or all(device in m.args for m in item.iter_markers("devices"))

    deselected = [item for item in items if not wanted(item)]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if wanted(item)]


def pytest_runtest_setup(item):
    if bundle_record.ALONGSIDE:
        # Recording alongside the tier: a test kept off cuda is no case.
        test_id = item.path.name + "::" + item.nodeid.partition("::")[2]
        bundle_record.test_recorded = not (
            any(test_id.startswith(p) for p in BUNDLE_IGNORE)
            or any("cuda" not in m.args for m in item.iter_markers("devices")))
    callspec = getattr(item, "callspec", None)
    if callspec is not None and str(callspec.params.get("device", "")).startswith("cuda"):
        available, reason = traceir_testing.cuda_status()
        if not available:
            pytest.skip(f"CUDA tier skipped: {reason}")
    # Each test draws the same random values however the tests are split
    # between processes (pytest-xdist) or selected: without this a test's
    # draws depend on which tests ran before it in its process.
    torch.manual_seed(0)


@pytest.fixture
def device(request, monkeypatch):
    """The device the test runs on, which run_graph and check_op default to."""
    monkeypatch.setattr(traceir_testing, "DEVICE", request.param)
    return request.param
