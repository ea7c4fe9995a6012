"""PyTorch's own operator samples (OpInfo, torch.testing._internal's op_db)
through TraceIR: for each op of include/TraceIR/Ops.def that has an OpInfo
(matched by ATen name), the OpInfo's sample inputs in float32 and int64
(where the OpInfo takes them; the first SAMPLES (2) of each, which keeps
CI's time: bench/opinfo_rate.py runs the whole op_db through from_torch), run as
one-op graphs with trace-run (check_op: after --free-dead-tensors, the
measured peak equals the predicted one) on each device (conftest.py's
`device` fixture: the cuda cases skip with one line without a GPU, and the
GPU bundle records them) and compared with the OpInfo's own op. Tolerances, by the result's dtype: float32 rtol=1e-4,
atol=1e-5 (the kernels compute in double and accumulate in another order
than PyTorch's); integers and bools exactly.

A sample becomes a call through the registry's schema: the input, the
positional args, then each keyword at its schema position (defaults fill
the gaps); non-tensor arguments go through the importers' scalar
conversion. A sample whose arguments the schema cannot place (a keyword it
does not name, a non-tensor input) is skipped, and one whose OpInfo `op`
reorders ATen's arguments (`where`'s) is not taken.

OPS are the ops whose samples all pass. The others that have an OpInfo are
the Core ATen work still open (integer matrix products and convolutions,
dtype= keywords, tensor-valued `narrow` starts, `where`'s argument order,
the batch norm and pooling samples the schema cannot place, the
var.unbiased variant's var(self, unbiased), a non-core overload whose bool
lands in var.correction's dim, topk's int64 samples with ties, whose
positions PyTorch leaves unspecified, native_group_norm's samples the
schema cannot place). A multi-result op's results are compared each.
TRACEIR_OPINFO_ALL=1 runs every op that has one, to see what fails.
"""
import os
import re

import pytest
import torch

from traceir_testing import check_op

try:
    from torch.testing._internal.common_methods_invocations import op_db
except ImportError as e:  # expecttest (requirements-test.txt) is missing
    pytest.skip(f"OpInfo samples unavailable: {e}", allow_module_level=True)

import traceir
from traceir import _schema
from traceir._import_common import scalar

if not traceir.HAS_COMPILER:
    pytest.skip("the OpInfo tier needs the compiler (the registry's schemas)",
                allow_module_level=True)

pytestmark = pytest.mark.usefixtures("device")

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
LISTED = re.findall(r"^TRACEIR_OP\((\w+),",
                    open(os.path.join(ROOT, "include", "TraceIR", "Ops.def")).read(), re.M)

OPS = {
    "_adaptive_avg_pool3d",
    "_scaled_dot_product_flash_attention_for_cpu",
    "_cdist_forward", "_embedding_bag", "_pdist_forward",
    "abs", "acos", "acosh", "add", "amax", "amin", "any", "argmax", "argmin", "as_strided", "asin",
    "asinh", "atan", "atan2", "atanh", "avg_pool2d", "avg_pool3d",
    "bitwise_and", "bitwise_not", "bitwise_or",
    "bitwise_xor", "ceil", "clamp", "clone", "constant_pad_nd", "contiguous", "copysign", "cos",
    "cosh", "cumprod", "cumsum", "diagonal", "digamma", "div", "elu", "eq", "erf", "erfc",
    "erfinv", "exp", "exp2", "expand", "expm1", "fill", "flatten", "flip", "floor", "fmax", "fmin",
    "fmod", "full_like", "ge", "gelu", "grid_sampler_2d", "gt", "hardtanh", "hypot",
    "index_select", "isinf", "isnan",
    "layer_norm", "le", "leaky_relu", "lgamma", "log", "log10", "log1p", "log2", "logical_and",
    "logical_not", "logical_or", "logical_xor", "lt",
    "masked_scatter",
    "max", "maximum", "mean", "min", "minimum",
    "mul", "ne", "neg", "permute", "pow", "prod", "reciprocal", "relu", "remainder", "repeat",
    "reshape", "round", "rsqrt", "scatter", "scatter_add", "scatter_reduce", "select",
    "select_scatter", "sigmoid", "sign", "signbit", "sin", "sinh", "slice", "slice_scatter", "sort",
    "sqrt", "squeeze", "sub",
    "sum", "t", "tan", "tanh", "transpose", "trunc", "unflatten", "unsqueeze", "view", "zero_",
}
# OpInfos whose aten_name is not the ATen op's (elu's is its Python name;
# adaptive_avg_pool3d decomposes to _adaptive_avg_pool3d, the Core ATen op).
ATEN_NAMES = {"nn.functional.elu": "elu", "cdist": "_cdist_forward",
              "nn.functional.pdist": "_pdist_forward",
              "nn.functional.embedding_bag": "_embedding_bag",
              "nn.functional.grid_sample": "grid_sampler_2d",
              "nn.functional.adaptive_avg_pool3d": "_adaptive_avg_pool3d",
              "torch.ops.aten._scaled_dot_product_flash_attention_for_cpu":
              "_scaled_dot_product_flash_attention_for_cpu"}
# OpInfo variants of another overload than Ops.def's (round's `decimals`
# ones call round.decimals, which Ops.def's round takes as its decimals
# argument): max's and min's reduction_no_dim and binary ones call
# max.default and max.other (the importer makes them amax and maximum), Ops.def's is max.dim;
# nn.functional.pad's `constant` variant calls F.pad(input, pad, mode,
# value), whose third argument is not constant_pad_nd's value.
# as_strided's partial_views samples are views into a larger storage, which
# as_strided reads; a graph's input is a tensor with a storage of its own
# (bench/opinfo_rate.py runs them through from_torch).
OTHER_OVERLOADS = {("max", "reduction_no_dim"),
                   ("max", "binary"), ("min", "reduction_no_dim"), ("min", "binary"),
                   ("constant_pad_nd", "constant"), ("as_strided", "partial_views")}
SAMPLES = 2
DTYPES = (torch.float32, torch.int64)


def opinfos():
    """(op, OpInfo) for the ops to run, each variant once."""
    wanted = set(LISTED) if os.environ.get("TRACEIR_OPINFO_ALL") == "1" else OPS
    named = [(ATEN_NAMES.get(o.aten_name, o.aten_name), o) for o in op_db]
    return [(name, o) for name, o in named if name in wanted
            and (name, o.variant_test_name) not in OTHER_OVERLOADS]


def _cdist_args(x1, args, kwargs):
    """torch.cdist(x1, x2, p=2., compute_mode=...) as _cdist_forward's."""
    modes = {"use_mm_for_euclid_dist_if_necessary": None, "use_mm_for_euclid_dist": 1,
             "donot_use_mm_for_euclid_dist": 2}
    args = args + [kwargs.pop("p", 2.0)] if len(args) < 2 else args
    mode = args[2] if len(args) > 2 else kwargs.pop("compute_mode", None)
    return [x1] + args[:2] + [modes.get(mode, mode)], kwargs


def _embedding_bag_args(weight, args, kwargs):
    """F.embedding_bag's mode names and padding_idx as _embedding_bag's."""
    kwargs["mode"] = {"sum": 0, "mean": 1, "max": 2}[kwargs.get("mode", "mean")]
    pad = kwargs.get("padding_idx")
    kwargs["padding_idx"] = -1 if pad is None else pad % weight.shape[0]
    return [weight] + args, kwargs


def _grid_sample_args(x, args, kwargs):
    """F.grid_sample's mode names as grid_sampler_2d's ints."""
    kwargs["interpolation_mode"] = {"bilinear": 0, "nearest": 1, "bicubic": 2}[
        kwargs.pop("mode", "bilinear")]
    kwargs["padding_mode"] = {"zeros": 0, "border": 1, "reflection": 2}[
        kwargs.get("padding_mode", "zeros")]
    kwargs["align_corners"] = bool(kwargs.get("align_corners"))
    return [x] + args, kwargs


# OpInfos of a public function whose ATen op takes its arguments in another
# form (names as ints), by OpInfo name: the sample's call as the ATen op's.
# The ATen op (on contiguous tensors, as the public function calls it) then
# is the reference, its first result checked against the OpInfo's.
ADAPTED = {"cdist": _cdist_args, "nn.functional.embedding_bag": _embedding_bag_args,
           "nn.functional.grid_sample": _grid_sample_args}


def call_args(op, sample, raw=False, adapt=None):
    """The sample as the op's call (tensors and scalars in schema order), or
    None where the schema cannot place it; `raw`: as Python values;
    `adapt`: an ADAPTED function."""
    params = _schema.parameters(op)
    if params is None or not isinstance(sample.input, torch.Tensor):
        return None
    args = [sample.input] + list(sample.args)
    kwargs = dict(sample.kwargs)
    if adapt:
        args, kwargs = adapt(sample.input, list(sample.args), kwargs)
    names = [p[0] for p in params]
    if any(k not in names[len(args):] for k in kwargs):
        return None
    for name, has_default, default in params[len(args):]:
        if name in kwargs:
            args.append(kwargs.pop(name))
        elif has_default:
            args.append(default)
        else:
            return None
    if raw:
        return args
    try:
        return [a if isinstance(a, torch.Tensor) else scalar(a, op) for a in args]
    except traceir.TraceIRError:
        return None


def test_the_ops_are_listed_and_have_opinfos():
    assert OPS <= set(LISTED), OPS - set(LISTED)
    assert {name for name, _ in opinfos()} == OPS


@pytest.mark.parametrize("op,info", opinfos(),
                         ids=[f"{n}{'.' + o.variant_test_name if o.variant_test_name else ''}"
                              for n, o in opinfos()])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: str(d).removeprefix("torch."))
def test_opinfo_samples(op, info, dtype):
    if dtype not in info.dtypes:
        pytest.skip(f"the OpInfo of {op} takes no {dtype}")
    ran = 0
    for sample in info.sample_inputs("cpu", dtype):
        if ran == SAMPLES:
            break
        adapt = ADAPTED.get(info.name)
        args = call_args(op, sample, adapt=adapt)
        if args is None:
            continue
        want = info.op(sample.input, *sample.args, **sample.kwargs)
        if adapt:
            raw = call_args(op, sample, raw=True, adapt=adapt)
            ref = getattr(torch.ops.aten, op)(
                *[a.contiguous() if isinstance(a, torch.Tensor) else a for a in raw])
            ref = list(ref) if isinstance(ref, tuple) else [ref]
            torch.testing.assert_close(ref[0], want, rtol=1e-4, atol=1e-5)
            want = tuple(ref) if len(ref) > 1 else ref[0]
        if isinstance(want, tuple) and all(isinstance(w, torch.Tensor) for w in want):
            want = list(want)  # the results of a multi-result op (sort, max.dim)
        elif not isinstance(want, torch.Tensor):
            continue
        check_op(op, args, want, rtol=1e-4, atol=1e-5)  # floats only
        ran += 1
    assert ran, f"no sample of {op} in {dtype} could be placed by its schema"
