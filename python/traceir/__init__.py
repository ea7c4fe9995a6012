"""TraceIR from Python: import PyTorch models as TraceIR graphs, run MLIR
passes on them, execute them on the CPU or CUDA with every dead tensor freed,
and profile the runs.

    import torch, traceir
    m = traceir.from_torch(model.eval(), (x,))     # torch.export; method="jit" for torch.jit.trace
    m = m.run_passes("canonicalize,free-dead-tensors")
    exe = traceir.compile(m, device="cpu")
    out = exe(x)                                    # torch in, torch out; numpy in, numpy out
    with traceir.profile("trace.json") as prof:
        exe(x)
    print(prof.summary())
    print(exe.memory_report())
    exe.save("model.trx")                           # runs where there is no LLVM:
    exe2 = traceir.load_executable("model.trx", params=m.params)

The runtime-only build (TRACEIR_RUNTIME_ONLY, for machines without LLVM)
has load_executable, profile, the thread count and memory reports
(traceir.runtime); parsing, passes, from_torch and compile need the full
build.
"""
import contextlib
import json
import os
import sys
import tempfile

from . import _traceir
from ._traceir import TraceIRError
from .ir import Graph, Node, Value, TensorType

__all__ = ["Module", "Graph", "Node", "Value", "TensorType", "CompiledGraph", "Profile", "TraceIRError", "compile", "from_torch",
           "import_anf", "load_executable", "profile", "set_num_threads", "num_threads", "set_deterministic", "deterministic", "set_kernel_tier", "kernel_tier",
           "dnnl_version",
           "supported_ops", "check"]

HAS_COMPILER = _traceir.HAS_COMPILER


def _compiler(what):
    """The native compiler half, or an error saying this build has none."""
    if not HAS_COMPILER:
        raise TraceIRError(f"{what} needs TraceIR's compiler, and this is the runtime-only build "
                           "(no LLVM/MLIR): it loads and runs saved executables "
                           "(traceir.load_executable); compile them where the full build is "
                           "(CompiledGraph.save, trace-translate --emit-executable)")
    return _traceir


def set_num_threads(n):
    """Threads of the CPU kernels and their BLAS, for every executable of
    the process (as torch.set_num_threads). The count starts from
    TRACEIR_NUM_THREADS, else OMP_NUM_THREADS, else the available cores."""
    if not isinstance(n, int) or isinstance(n, bool) or n < 1:
        raise TypeError(f"set_num_threads takes an int >= 1, got {n!r}")
    _traceir.set_num_threads(n)


def num_threads():
    return _traceir.num_threads()


def set_deterministic(on):
    """Deterministic mode: CPU results that do not depend on the thread
    count. TraceIR's own kernels never do; in this mode the libraries' work
    is split the same way at every count too (each matrix product in fixed
    blocks of rows, one single-threaded BLAS call each; oneDNN's
    convolutions on one thread), at some cost in speed at more than one
    thread. TRACEIR_DETERMINISTIC=1 sets it from the start."""
    if not isinstance(on, bool):
        raise TypeError(f"set_deterministic takes a bool, got {on!r}")
    _traceir.set_deterministic(on)


def deterministic():
    return _traceir.deterministic()


def set_kernel_tier(tier):
    """Which CPU kernels run: "optimized" (the default: the optimized tier's
    kernel where it covers the op, dtype and layout, else the portable one)
    or "portable" (the reference kernels only, which compute in double or
    int64). TRACEIR_KERNEL_TIER sets the starting value. The profile's
    "tier" says which ran each op."""
    if not isinstance(tier, str):
        raise TypeError(f"set_kernel_tier takes 'optimized' or 'portable', got {tier!r}")
    _traceir.set_kernel_tier(tier)


def kernel_tier():
    return _traceir.kernel_tier()


def dnnl_version():
    """The oneDNN version conv2d and the 2-D pools run on at the optimized
    tier ("2.6.3"), or None in a runtime built without oneDNN (those ops
    then run their portable kernels)."""
    return _traceir.dnnl_version() or None


def _atomic_write(path, write):
    """Writes through a temporary file in the same directory, renamed when
    complete, so a failure never leaves a partial file under `path`."""
    directory = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=os.path.basename(path) + ".", suffix=".tmp", dir=directory)
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


class Module:
    """A TraceIR module held natively: parsed and verified once, then walked
    (`graphs`), rewritten by passes and compiled in place, printed on demand
    (`str(m)`, `text`); and the tensors of its `trace.param` arguments by name
    (`params`)."""

    def __init__(self, text, params=None, name="<string>", out_spec=None, _ir=None):
        if _ir is None:
            if not isinstance(text, str):
                raise TypeError(f"Module text must be a str, got {type(text).__name__}")
            _ir = _compiler("parsing a Module").IRModule.parse(text, name)
        self._ir = _ir
        self.params = dict(params or {})
        self.name = name
        # How a from_torch module's flat outputs nest (a torch pytree spec).
        self.out_spec = out_spec
        # What traceir.ir keeps of the held module (ir._init_state).
        from .ir import _init_state
        _init_state(self)

    @staticmethod
    def parse(text, params=None, name="<string>"):
        """Parses and verifies TraceIR text (errors name line and column)."""
        return Module(text, params, name)

    @staticmethod
    def load(path, params=None):
        """Reads MLIR text (a saved executable, .trx, loads with
        traceir.load_executable)."""
        with open(path, "rb") as f:
            if f.read(8) == b"TRACEIRX":
                raise TraceIRError(f"{path} is a saved executable: load it with "
                                   "traceir.load_executable(path, params=...)")
        with open(path) as f:
            return Module(f.read(), params, name=path)

    @staticmethod
    def empty(name="<new>", location=None):
        """A module with no graph (traceir.Graph adds one)."""
        from .ir import _location
        return Module(None, None, name,
                      _ir=_compiler("Module.empty").IRModule.create(name, _location(location)))

    def strip_frees(self):
        """Erases every trace.free and the memory plans made for them
        (editing a graph needs that; free-dead-tensors and plan-memory put
        them back); returns how many frees."""
        from .ir import _edited
        try:
            return self._ir.strip_frees()
        finally:
            _edited(self, structural=True)

    @property
    def text(self):
        """The module as MLIR text, with locations (what trace-opt prints)."""
        return self._ir.print()

    @property
    def graphs(self):
        """The module's graphs (traceir.ir.Graph), by position or by name."""
        from .ir import Graphs
        return Graphs(self)

    def verify(self):
        """Runs the verifier; raises TraceIRError with its message and
        location."""
        self._ir.verify()

    def clone(self):
        """An independent copy (same params dict contents, its own IR)."""
        return Module(None, self.params, self.name, self.out_spec, _ir=self._ir.clone())

    def __str__(self):
        return self.text

    def __repr__(self):
        graphs = ", ".join(f"@{g.name}" for g in self.graphs)
        return f"<traceir.Module {self.name}: {graphs}, {len(self.params)} params>"

    def run_passes(self, pipeline):
        """Runs a pass pipeline on this module in place and returns it,
        written as for trace-opt's --pass-pipeline without the anchor, e.g.
        "canonicalize,cse,free-dead-tensors". Graph, Node and Value handles
        taken before are stale afterwards (they raise TraceIRError); copy
        first with clone() to keep the module as it was."""
        if not isinstance(pipeline, str):
            raise TypeError(f"pipeline must be a str, got {type(pipeline).__name__}")
        from .ir import _rewritten
        try:
            self._ir.run_passes(pipeline)
        finally:
            _rewritten(self)
        return self

    def save(self, path):
        text = self.text
        _atomic_write(path, lambda f: f.write(text.encode()))

    def save_executable(self, path, device="cpu", graph="", gpu_kernels=None, chip="sm_90"):
        """Builds the graph for `device` without using it (a CPU machine
        compiles for a GPU server) and saves the executable as `path` (.trx),
        as trace-translate --emit-executable does; gpu_kernels="compile"
        runs the ops the GPU lowering covers with its kernels, compiled for
        `chip`. Parameters are not in the file (save_params)."""
        if gpu_kernels not in (None, "compile"):
            raise TypeError(f"gpu_kernels must be None or \"compile\", got {gpu_kernels!r}")
        data = _compiler("save_executable").emit_executable(
            self._ir, graph, device, gpu_kernels == "compile", chip)
        _atomic_write(path, lambda f: f.write(data))

    def save_params(self, path):
        """Writes `params` as a safetensors file (trace-run --params)."""
        from safetensors.numpy import save as save_numpy
        arrays = {k: _to_numpy(k, v) for k, v in self.params.items()}
        data = save_numpy(arrays)
        _atomic_write(path, lambda f: f.write(data))


def import_anf(text, name="<string>", params=None):
    """Imports a 2017 PyTorch text trace (ANF), as trace-translate
    --import-anf does."""
    return Module(None, params, name, _ir=_compiler("import_anf").IRModule.import_anf(text, name))


def _to_numpy(name, value):
    import numpy as np
    if type(value).__module__.startswith("torch"):
        return _checked_tensor(f"param '{name}'", value).cpu().contiguous().numpy()
    if isinstance(value, np.ndarray):
        return np.ascontiguousarray(_checked_array(f"param '{name}'", value))
    raise TypeError(f"param '{name}': expected a torch.Tensor or a numpy.ndarray, "
                    f"got {type(value).__name__}")


# What the native layer holds (its safetensors dtypes), in torch's and
# numpy's names.
_TORCH_DTYPES = ("float32", "float64", "float16", "bfloat16", "int64", "int32", "int16", "int8",
                 "uint8", "bool")
_NUMPY_DTYPES = tuple(d for d in _TORCH_DTYPES if d != "bfloat16")
_FUNCTORCH = (("is_batchedtensor", "torch.func.vmap (a functorch BatchedTensor)"),
              ("is_gradtrackingtensor", "torch.func.grad or jacrev (a functorch GradTrackingTensor)"),
              ("is_functionaltensor", "torch.func.functionalize (a FunctionalTensorWrapper)"))


def _checked_tensor(label, value):
    """`value` (a torch.Tensor) as a plain dense tensor with data TraceIR can
    hold, or a TypeError naming the argument (`label`), what it is and what
    TraceIR takes: torch's own errors from .numpy() on a meta, sparse or
    quantized tensor name neither."""
    import torch
    cls = type(value)
    if value.is_nested:
        raise TypeError(f"{label}: a nested tensor ({value.layout}); TraceIR takes dense tensors: "
                        "pass tensor.to_padded_tensor(0) or the components one by one")
    fake = sys.modules.get("torch._subclasses.fake_tensor")
    if fake is not None and isinstance(value, fake.FakeTensor):
        raise TypeError(f"{label}: a FakeTensor holds no data (it only describes a shape and a "
                        "dtype); pass a real torch.Tensor")
    dtensor = sys.modules.get("torch.distributed.tensor")
    if dtensor is not None and isinstance(value, getattr(dtensor, "DTensor", ())):
        raise TypeError(f"{label}: a DTensor (sharded across devices); pass dtensor.full_tensor()")
    # Any other wrapper subclass (its own __torch_dispatch__) may hold no
    # data of its own; plain subclasses such as nn.Parameter are tensors.
    if any("__torch_dispatch__" in c.__dict__ for c in cls.__mro__
           if c not in (torch.Tensor, getattr(torch._C, "TensorBase", torch.Tensor))):
        raise TypeError(f"{label}: a tensor subclass ({cls.__module__}.{cls.__qualname__}) with its "
                        "own __torch_dispatch__; pass a plain torch.Tensor")
    functorch = getattr(torch._C, "_functorch", None)
    if functorch is not None and functorch.is_functorch_wrapped_tensor(value):
        where = next((w for f, w in _FUNCTORCH if getattr(functorch, f)(value)),
                     "a functorch transform")
        raise TypeError(f"{label}: a tensor inside {where}; a TraceIR graph runs on whole "
                        "tensors, outside torch.func transforms")
    if value.layout is not torch.strided:
        raise TypeError(f"{label}: a {value.layout} tensor; TraceIR takes dense (torch.strided) "
                        "tensors: pass tensor.to_dense()")
    if value.device.type == "meta":
        raise TypeError(f"{label}: a meta tensor holds no data; pass a tensor on the CPU or a "
                        "CUDA device")
    if value.is_quantized:
        raise TypeError(f"{label}: a quantized tensor ({value.dtype}, {value.qscheme()}); "
                        "TraceIR takes unquantized tensors: pass tensor.dequantize() (or "
                        "tensor.int_repr() for the stored integers)")
    name = str(value.dtype).removeprefix("torch.")
    if name not in _TORCH_DTYPES:
        raise TypeError(f"{label}: dtype {value.dtype}, which TraceIR cannot hold; it takes "
                        + ", ".join(f"torch.{d}" for d in _TORCH_DTYPES))
    if value.requires_grad:
        value = value.detach()
    if value.is_neg():  # a lazily negated view (torch's neg bit): materialize it
        value = value.resolve_neg()
    return value


def _checked_array(label, value):
    """`value` (a numpy.ndarray) in native byte order with a dtype TraceIR
    can hold, or a TypeError naming the argument."""
    import numpy as np
    if isinstance(value, np.ma.MaskedArray):
        raise TypeError(f"{label}: a numpy masked array, whose mask TraceIR would drop; pass "
                        "array.filled(fill_value) or numpy.asarray(array)")
    dtype = value.dtype
    if dtype.fields is not None or dtype.subdtype is not None or dtype.name not in _NUMPY_DTYPES:
        raise TypeError(f"{label}: a numpy array of dtype {dtype}, which TraceIR cannot hold; it "
                        "takes " + ", ".join(_NUMPY_DTYPES))
    if not dtype.isnative:  # the same values in this machine's byte order
        value = value.astype(dtype.newbyteorder("="))
    return value


def _host_array(name, value, kind="input"):
    """What the native run takes, without a copy where possible: a numpy
    array (a CPU torch tensor's own memory through .numpy()), or a torch
    tensor through DLPack for dtypes numpy lacks (bfloat16). Second: whether
    the caller gave torch tensors (so outputs are torch tensors too). Errors
    name the argument: input 'x' or param 'fc.weight'."""
    global _np, _torch
    label = f"{kind} '{name}'"
    if _np is None:
        import numpy
        _np = numpy
    if isinstance(value, _np.ndarray):
        value = _checked_array(label, value)
        return (value if value.flags.c_contiguous else _np.ascontiguousarray(value)), False
    if _torch is None and type(value).__module__.startswith("torch"):
        import torch
        _torch = torch
    if _torch is not None and isinstance(value, _torch.Tensor):
        value = _checked_tensor(label, value)
        try:
            if not value.is_cpu:  # CUDA (or another device): copied to the host
                value = value.cpu()
            if not value.is_contiguous():
                value = value.contiguous()
            if value.dtype is _torch.bfloat16:  # numpy has no bfloat16
                return value, True
            return value.numpy(), True
        except (RuntimeError, TypeError, NotImplementedError) as e:
            # A kind of tensor the checks above do not know yet.
            raise TypeError(f"{label}: cannot read the tensor's data ({type(e).__name__}: {e})") from e
    raise TypeError(f"{label}: expected a torch.Tensor or a numpy.ndarray, "
                    f"got {type(value).__name__}")


def _lend(name, value, cuda):
    """What the native run reads in place for input `name`, without a copy
    where it can: a numpy array, a CPU torch tensor's numpy view with its
    strides (a quarter of __dlpack__'s cost; bfloat16, which numpy lacks,
    through DLPack), or, for a CUDA executable, a CUDA tensor as a DLPack capsule for
    the legacy default stream, on which TraceIR's kernels run (torch orders
    the work queued on its current stream before it). A CUDA tensor for a
    CPU executable is copied to the host. Second: whether the caller gave a
    torch tensor; third: whether it lies on a CUDA device."""
    global _torch
    if _torch is None and type(value).__module__.startswith("torch"):
        import torch
        _torch = torch
    if _torch is None or not isinstance(value, _torch.Tensor):
        return _host_array(name, value)[0], False, False
    label = f"input '{name}'"
    value = _checked_tensor(label, value)
    try:
        if value.is_cuda and cuda:
            return value.__dlpack__(stream=1), True, True
        if not value.is_cpu:
            value = value.cpu()
        return (value if value.dtype is _torch.bfloat16 else value.numpy()), True, False
    except (RuntimeError, TypeError, NotImplementedError, BufferError) as e:
        # A kind of tensor the checks above do not know yet.
        raise TypeError(f"{label}: cannot read the tensor's data ({type(e).__name__}: {e})") from e


_np = _torch = None
_current_profile = None


def _from_native(array, bf16):
    """A native output as a torch tensor; bfloat16 comes as its uint16 bits."""
    global _torch
    if _torch is None:
        import torch
        _torch = torch
    t = _torch.from_numpy(array)
    return t.view(_torch.bfloat16) if bf16 else t


def _is_array(v):
    import numpy as np
    return isinstance(v, np.ndarray) or type(v).__name__ == "Tensor"


def _only_arrays(v):
    if isinstance(v, (tuple, list)):
        return bool(v) and all(_only_arrays(x) for x in v)
    return _is_array(v)


def _flatten(values):
    """Tuples and lists of tensors become their leaves; anything else stays
    (and is reported as it is)."""
    out = []
    for v in values:
        if isinstance(v, (tuple, list)) and _only_arrays(v):
            out += _flatten(v)
        else:
            out.append(v)
    return out


class CompiledGraph:
    """A graph built for one device with its parameters loaded; call it with
    the graph's inputs (positionally in `input_names` order, or by name)."""

    def __init__(self, module, device, graph="", gpu_kernels=None, _native=None, _params=None):
        self.module = module
        if _native is not None:  # load_executable
            self._exe = _native
            params = _params
        else:
            compile_kernels = gpu_kernels == "compile"
            binary = "" if gpu_kernels is None or compile_kernels else os.fspath(gpu_kernels)
            self._exe = _compiler("compile").create_executable(
                module._ir, graph, device, compile_kernels, binary)
            params = module.params
        missing = [n for n in self._exe.param_names if n not in params]
        if missing:
            raise TraceIRError("missing parameter" + ("s " if len(missing) > 1 else " ") +
                               ", ".join(f"'{n}'" for n in missing))
        self._exe.load_params([(n, _host_array(n, params[n], "param")[0])
                               for n in self._exe.param_names])
        self.device = self._exe.device
        self.input_names = list(self._exe.input_names)
        self.param_names = list(self._exe.param_names)
        self.check_frees = False
        self.seed = 0
        # Re-nest the outputs only where the model's are nested.
        spec = module.out_spec if module is not None else None
        self._nested = spec is not None and not spec.is_leaf()

    def __call__(self, *args, **kwargs):
        names = self.input_names
        if kwargs or len(args) != len(names) or any(isinstance(a, (tuple, list)) for a in args):
            args = self._bind(args, kwargs)
        cuda = self.device != "cpu"
        arrays, as_torch, on_device = [], False, False
        for n, a in zip(names, args):
            array, is_torch, is_cuda = _lend(n, a, cuda)
            as_torch |= is_torch
            on_device |= is_cuda
            arrays.append((n, array))
        prof = _current_profile._native if _current_profile is not None else None
        # Outputs are torch tensors for torch inputs (and for bfloat16, which
        # numpy lacks), on the GPU when an input came from there, as torch
        # keeps a CUDA model's results on its device.
        outs = self._exe.run(arrays, on_device, self.check_frees, self.seed, prof)
        if as_torch:
            outs = [o if isinstance(o, _torch.Tensor) else _torch.from_numpy(o) for o in outs]
        if self._nested:
            from torch.utils._pytree import tree_unflatten
            return tree_unflatten(outs, self.module.out_spec)
        return outs[0] if len(outs) == 1 else tuple(outs)

    def _bind(self, args, kwargs):
        """The inputs in `input_names` order from positional and keyword
        arguments; a tuple or list argument (an LSTM's (h, c)) gives one
        input per leaf, as from_torch named them: hidden.0, hidden.1."""
        names = self.input_names
        args = _flatten(args)
        kwargs = {f"{k}.{i}" if isinstance(v, (tuple, list)) else k: leaf
                  for k, v in kwargs.items()
                  for i, leaf in enumerate(_flatten((v,)))}
        if len(args) > len(names):
            raise TypeError(f"the graph takes {len(names)} input{'s' if len(names) != 1 else ''} "
                            f"({', '.join(names)}), got {len(args)}")
        bound = dict(zip(names, args))
        for k, v in kwargs.items():
            if k not in names:
                raise TypeError(f"unknown input '{k}'; the graph's inputs are: {', '.join(names)}")
            if k in bound:
                raise TypeError(f"input '{k}' given twice")
            bound[k] = v
        missing = [n for n in names if n not in bound]
        if missing:
            raise TypeError(f"missing input{'s' if len(missing) > 1 else ''}: {', '.join(missing)}")
        return [bound[n] for n in names]

    def state_dict(self):
        """The parameters' current values by name (torch tensors), as the
        runs left them: training-mode batch_norm updates its running
        statistics in place, as in PyTorch."""
        return {n: _from_native(*self._exe.read_param(n)) for n in self.param_names}

    def memory_report(self):
        """The last call's memory report (as trace-run --memory-report=json)."""
        return json.loads(self._exe.memory_report())

    def save(self, path):
        """Saves the executable as `path` (.trx): traceir.load_executable and
        trace-exec run it without LLVM or MLIR. Parameters are not in the
        file (Module.save_params writes them)."""
        self._exe.save(os.fspath(path))

    def describe(self):
        """What a saved file of it holds (as trace-exec --describe)."""
        return self._exe.describe()


def _read_params(params):
    if params is None:
        return {}
    if isinstance(params, (str, os.PathLike)):
        from safetensors.numpy import load_file
        return load_file(os.fspath(params))
    if isinstance(params, dict):
        return params
    raise TypeError(f"params must be a dict of tensors or the path of a safetensors file, "
                    f"got {type(params).__name__}")


def load_executable(path, params=None, device=None):
    """Loads a saved executable (CompiledGraph.save, Module.save_executable,
    trace-translate --emit-executable) with its parameters (a dict of torch
    tensors or numpy arrays, or a safetensors file). It runs on the device
    it was built for, or on `device` (of the same kind: "cuda:1" for a file
    built for cuda). Needs no LLVM or MLIR: the runtime-only build has it."""
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"load_executable takes a path, got {type(path).__name__}")
    if device is not None and not isinstance(device, str):
        raise TypeError(f"device must be a str such as \"cuda:1\", got {type(device).__name__}")
    native = _traceir.Executable.load(os.fspath(path), device or "")
    return CompiledGraph(None, None, _native=native, _params=_read_params(params))


def compile(module, device="cpu", fallback=False, graph="", gpu_kernels=None):
    """Builds `module` for `device` ("cpu", "cuda", "cuda:N"). With
    fallback=True a device that cannot be used falls back to the CPU, with a
    warning that says why; otherwise that is an error.

    gpu_kernels="compile" (or the path of a fatbin that `trace-translate
    --emit-gpu-binary` wrote for the same graph) runs the ops the lowering
    covers with the compiler's kernels instead of the runtime's, like
    `trace-run --compile-gpu-kernels` / `--gpu-binary`; CUDA devices only."""
    _compiler("compile")
    if not isinstance(module, Module):
        raise TypeError(f"compile() takes a traceir.Module, got {type(module).__name__}")
    if gpu_kernels is not None and not (gpu_kernels == "compile" or isinstance(gpu_kernels, (str, os.PathLike))):
        raise TypeError("gpu_kernels must be None, \"compile\" or the path of a fatbin, "
                        f"got {type(gpu_kernels).__name__}")
    try:
        return CompiledGraph(module, device, graph, gpu_kernels)
    except TraceIRError as e:
        if not fallback or device == "cpu" or "no CUDA device" not in str(e):
            raise
        import warnings
        warnings.warn(f"traceir: {device} unavailable ({e}); running on the CPU instead",
                      RuntimeWarning, stacklevel=2)
        return CompiledGraph(module, "cpu", graph)


class Profile:
    """One profile of the calls made while it is active (see profile())."""

    def __init__(self, path=None):
        self.path = path
        self._native = _traceir.Profiler()
        self._trace = None

    def start(self):
        global _current_profile
        if _current_profile is not None:
            raise TraceIRError("a traceir profile is already active")
        self._native.start()
        _current_profile = self

    def stop(self):
        global _current_profile
        _current_profile = None
        self._native.stop(self.path or "")
        if not self.path:
            self._trace = json.loads(self._native.trace_json())

    def summary(self):
        """A table per op name: calls, total, mean, min, max, % of run."""
        return self._native.summary()

    def trace(self):
        """The Chrome trace as a dict."""
        if self._trace is None and self.path:
            with open(self.path) as f:
                self._trace = json.load(f)
        return self._trace


@contextlib.contextmanager
def profile(path=None):
    """Profiles the compiled graphs called inside the block; writes a
    Chrome/Perfetto trace to `path` (or keeps it: Profile.trace())."""
    p = Profile(path)
    p.start()
    try:
        yield p
    finally:
        global _current_profile
        if _current_profile is p:
            p.stop()


def supported_ops(device="cpu"):
    """The ops (PyTorch's ATen names) this runtime has a kernel for on
    `device` ("cpu" or "cuda"), sorted: what a graph's calls may be for
    compile(module, device) to run it. The CUDA kernels are compiled and
    tested on the host in every build with CUDA; none has run on a GPU yet."""
    return list(_traceir.kernel_ops(device))


def check(model, args, kwargs=None, device="cpu", method="export"):
    """The gaps compile(from_torch(model, args), device) would meet, without
    compiling: {op: [locations]} for every call of the imported graph that
    has no kernel on `device`, in graph order ({} when all of it runs).
    Import errors raise as from_torch's do."""
    module = from_torch(model, args, kwargs, method=method)
    ops = set(supported_ops(device))
    gaps = {}
    for graph in module.graphs:
        for node in graph.nodes:
            if node.op == "pyop" and node.target not in ops:
                gaps.setdefault(node.target, []).append(node.location)
    return gaps


def from_torch(model, args, kwargs=None, method="export", decompose=None):
    """Imports a torch.nn.Module called on `args` as a TraceIR Module:
    torch.export (method="export", the default) or torch.jit.trace
    (method="jit"). Parameters and buffers become trace.param arguments by
    their state_dict names, tensor constants trace.constant, inputs take the
    forward arguments' names, outputs are returned flat (and re-nested when
    the compiled graph is called).

    decompose=None (the default): when the exported graph calls an op
    TraceIR has no kernel for, it is decomposed with PyTorch's core ATen
    decompositions, except for the ops TraceIR runs whole (linear,
    scaled_dot_product_attention, layer_norm, lstm, ...). decompose=True
    decomposes everything to core ATen (ExportedProgram.run_decompositions()),
    decompose=False nothing. Decomposed forms (convolution, _softmax,
    split_with_sizes, ...) map onto the registry's ops where they can; an op
    left without a kernel stays a pyop, and compile() names all of them
    (check() lists them without compiling)."""
    from ._torch_import import import_model
    return import_model(model, args, kwargs, method, decompose)
