"""Writes test/Conversion/run-*.mlir: graphs lowered by --convert-trace-to-linalg
and run on the CPU, with %fpcheck lines on the printed values.

The expected values are PyTorch's: this script runs each graph both ways (the
lowered module through %run-linalg's pipeline, the torch function) and refuses
to write a test whose values disagree beyond 1e-5; the FP lines then quote
the runner's printing of those values. Run it again only when a case changes:
    python test/Conversion/Inputs/gen_run_tests.py BUILD_DIR
"""
import math, os, re, struct, subprocess, sys
import torch
import torch.nn.functional as F

BIN = "/usr/lib/llvm-22/bin"
PIPE = ("--one-shot-bufferize=bufferize-function-boundaries --convert-linalg-to-loops "
        "--convert-math-to-llvm --convert-math-to-libm --expand-strided-metadata --lower-affine "
        "--convert-scf-to-cf --convert-to-llvm --reconcile-unrealized-casts").split()
LIBS = "/usr/lib/llvm-22/lib/libmlir_runner_utils.so,/usr/lib/llvm-22/lib/libmlir_c_runner_utils.so"
DT = {torch.float32: "f32", torch.int64: "i64", torch.bool: "i1"}


def ty(t):
    return "tensor<" + "".join(f"{d}x" for d in t.shape) + DT[t.dtype] + ">"


def dense(t):
    def lit(v):
        if t.dtype == torch.bool:
            return "true" if v else "false"
        if t.dtype == torch.float32 and not math.isfinite(v):
            # MLIR spells NaN and the infinities by their bits.
            return "0x%08X" % struct.unpack("<I", struct.pack("<f", v))[0]
        return repr(float(v)) if t.dtype == torch.float32 else str(int(v))
    def rec(x):
        if x.dim() == 0:
            return lit(x.item())
        return "[" + ", ".join(rec(r) for r in x) + "]"
    return f"dense<{rec(t)}> : {ty(t)}"


def case(name, inputs, body, outs, fn, comment):
    """inputs: list of (name, tensor); body: pyop lines using %name;
    outs: SSA names returned; fn(**inputs) -> list of tensors."""
    expected = [o.float() for o in fn(**dict(inputs))]
    args = ", ".join(f"%{n}: {ty(t)}" for n, t in inputs)
    rtys = ", ".join(ty(o) for o in expected)
    graph = [f"trace.graph @{name}({args}) -> ({rtys}) {{"]
    graph += ["  " + l for l in body]
    graph += [f"  ret {', '.join('%' + o for o in outs)} : {rtys}", "}"]
    main = [f"func.func @main() {{"]
    for n, t in inputs:
        main.append(f"  %{n} = arith.constant {dense(t)}")
    results = ", ".join(f"%r{i}" for i in range(len(expected)))
    main.append(f"  {results} = call @{name}({', '.join('%' + n for n, _ in inputs)}) : "
                f"({', '.join(ty(t) for _, t in inputs)}) -> ({rtys})")
    for i, o in enumerate(expected):
        main.append(f"  %u{i} = tensor.cast %r{i} : {ty(o)} to tensor<*xf32>")
        main.append(f"  call @printMemrefF32(%u{i}) : (tensor<*xf32>) -> ()")
    main += ["  return", "}", "func.func private @printMemrefF32(tensor<*xf32>)"]
    return dict(name=name, graph=graph, main=main, expected=expected, comment=comment)


def run(build, c):
    src = "\n".join(c["graph"]) + "\n"
    lowered = subprocess.run([os.path.join(build, "bin", "trace-opt"), "-", "-convert-trace-to-linalg"],
                             input=src, capture_output=True, text=True, check=True).stdout
    lines = [l for l in lowered.splitlines() if l.strip()]
    module = "\n".join(lines[:-1] + c["main"] + ["}"])
    llvm = subprocess.run([f"{BIN}/mlir-opt"] + PIPE, input=module, capture_output=True, text=True, check=True).stdout
    out = subprocess.run([f"{BIN}/mlir-runner", "-e", "main", "-entry-point-result=void", f"-shared-libs={LIBS}"],
                         input=llvm, capture_output=True, text=True, check=True).stdout
    # One printout per result: a header line, then the data lines.
    blocks = re.split(r"^Unranked Memref.*\n", out, flags=re.M)[1:]
    assert len(blocks) == len(c["expected"]), out
    checks = []
    for block, exp in zip(blocks, c["expected"]):
        got = [float(v) for v in re.findall(r"-?(?:nan|inf|[0-9.]+(?:e[-+]?[0-9]+)?)", block)]
        want = exp.flatten().tolist()
        assert len(got) == len(want), (c["name"], got, want)
        for g, w in zip(got, want):
            assert (math.isnan(g) and math.isnan(w)) or math.isclose(g, w, rel_tol=1e-5, abs_tol=1e-5), \
                (c["name"], g, w)
        checks.append(f"// FP: Unranked Memref {{{{.*}}}} sizes = [{', '.join(map(str, exp.shape))}]")
        checks += [f"// FP-NEXT: {l.strip()}" for l in block.strip().splitlines()]
    return checks


HEADER = """// {title}
// Lowered by --convert-trace-to-linalg and run on the CPU through the upstream
// bufferization/LLVM pipeline; every printed value is PyTorch's result for the
// same graph (checked to 1e-5 by Inputs/gen_run_tests.py, which wrote this file), and
// the printed values are compared to 1e-5 too (%fpcheck: libm differs by CPU).
// The `// MAIN:` lines are a driver appended to the lowered module: a func.call
// cannot reference the trace.graph before it is lowered.
// RUN: trace-opt %s -convert-trace-to-linalg | grep -v '^$' | sed '$d' > %t.mlir
// RUN: sed -n 's|^// MAIN: ||p' %s >> %t.mlir
// RUN: echo '}}' >> %t.mlir
// RUN: mlir-opt %t.mlir %linalg-to-llvm | %run-main | %fpcheck %s
"""


def write(build, path, title, cases):
    assert len(cases) == 1
    c = cases[0]
    checks = run(build, c)
    with open(path, "w") as f:
        f.write(HEADER.format(title=title) + "\n")
        f.write("".join(f"// {l}\n" for l in c["comment"]) + "\n")
        f.write("\n".join(c["graph"]) + "\n\n")
        f.write("".join(f"// MAIN: {l}\n" for l in c["main"]) + "\n")
        f.write("\n".join(checks) + "\n")
    print("wrote", path)


def main():
    build = sys.argv[1]
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    x = torch.tensor([[1.0, -2.0, 3.0], [0.5, 0.25, -1.5]])
    b = torch.tensor([0.5, -0.5, 1.0])
    i = torch.tensor([[2], [-1]])
    m = torch.tensor([[True, False, True], [False, True, True]])

    def ew(x, b, i, m):
        v = torch.add(x, b, alpha=2.0); v = v - 1; v = v * i; v = v / 2.0
        g = F.gelu(v); t = F.gelu(v, approximate="tanh"); s = torch.sigmoid(t)
        p = torch.where(m, s ** 2.0, 0.0)
        u = torch.rsqrt(torch.exp(torch.tanh(torch.relu(-g))) + torch.sqrt(torch.abs(x)) + torch.log(s))
        return [v, g, p, u]
    write(build, os.path.join(here, "run-elementwise.mlir"), "Elementwise ops, numerically.", [case(
        "ew", [("x", x), ("b", b), ("i", i), ("m", m)], [
            '%0 = pyop "add"(%x, %b, 2.0) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>',
            '%1 = pyop "sub"(%0, 1) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%2 = pyop "mul"(%1, %i) : (tensor<2x3xf32>, tensor<2x1xi64>) -> tensor<2x3xf32>',
            '%v = pyop "div"(%2, 2.0) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%g = pyop "gelu"(%v) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%t = pyop "gelu"(%v, "tanh") : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%s = pyop "sigmoid"(%t) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%sq = pyop "pow"(%s, 2.0) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%p = pyop "where"(%m, %sq, 0.0) : (tensor<2x3xi1>, tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%n = pyop "neg"(%g) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%r = pyop "relu"(%n) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%th = pyop "tanh"(%r) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%e = pyop "exp"(%th) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%a = pyop "abs"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%q = pyop "sqrt"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%l = pyop "log"(%s) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%3 = pyop "add"(%e, %q) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%4 = pyop "add"(%3, %l) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>',
            '%u = pyop "rsqrt"(%4) : (tensor<2x3xf32>) -> tensor<2x3xf32>',
        ], ["v", "g", "p", "u"], ew,
        ["add with alpha and a broadcast [3], sub of a number, mul by a promoted i64 [2,1],",
         "div, both gelu forms, sigmoid, pow, where on a mask, neg/relu/tanh/exp, abs/sqrt,",
         "log and rsqrt."])])

    x3 = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) * 0.25 - 2.5
    w4 = torch.tensor([1.0, 0.5, -1.0, 2.0]); b4 = torch.tensor([0.0, 0.25, 0.5, -0.5])
    def red(x, w, b):
        return [x.sum(1, keepdim=True), x.mean(), x.amax(-1), torch.softmax(x, -1),
                torch.log_softmax(x, 1), F.layer_norm(x, [4], w, b, 1e-5),
                F.layer_norm(x, [3, 4], None, None, 1e-5)]
    write(build, os.path.join(here, "run-reductions.mlir"), "Reductions, softmax and layer_norm, numerically.", [case(
        "red", [("x", x3), ("w", w4), ("b", b4)], [
            '%0 = pyop "sum"(%x, 1, True) : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>',
            '%1 = pyop "mean"(%x) : (tensor<2x3x4xf32>) -> tensor<f32>',
            '%2 = pyop "amax"(%x, -1) : (tensor<2x3x4xf32>) -> tensor<2x3xf32>',
            '%3 = pyop "softmax"(%x, -1) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>',
            '%4 = pyop "log_softmax"(%x, 1) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>',
            '%5 = pyop "layer_norm"(%x, [4], %w, %b, 1.0e-05, True) : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>',
            '%6 = pyop "layer_norm"(%x, [3, 4], None, None, 1.0e-05, True) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>',
        ], ["0", "1", "2", "3", "4", "5", "6"], red,
        ["sum with keepdim, mean over everything, amax over the last dim, softmax and",
         "log_softmax, layer_norm with weight and bias and over two dims without."])])

    xm = torch.arange(30, dtype=torch.float32).reshape(2, 5, 3) * 0.125 - 1.0
    wm = torch.tensor([[1.0, 0.5, -1.0], [0.0, 2.0, 1.0], [-0.5, 0.25, 0.75], [1.5, -1.0, 0.5]])
    bm = torch.tensor([0.5, -0.25, 1.0, 0.0])
    ym = torch.tensor([[1.0, -1.0, 0.5, 2.0], [0.25, 0.5, -2.0, 1.0], [-1.0, 0.0, 1.0, 0.5]])
    zm = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4) * 0.5 - 3.0
    def mm(x, w, b, y, z):
        s = x[1]
        return [F.linear(x, w, b), torch.matmul(x, y), torch.bmm(x, z),
                torch.addmm(b, s, y, beta=0.5, alpha=2.0), torch.matmul(s.unsqueeze(0), z)]
    write(build, os.path.join(here, "run-matmul.mlir"), "The matmul family, numerically.", [case(
        "mm", [("x", xm), ("w", wm), ("b", bm), ("y", ym), ("z", zm)], [
            '%0 = pyop "linear"(%x, %w, %b) : (tensor<2x5x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>',
            '%1 = pyop "matmul"(%x, %y) : (tensor<2x5x3xf32>, tensor<3x4xf32>) -> tensor<2x5x4xf32>',
            '%2 = pyop "bmm"(%x, %z) : (tensor<2x5x3xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>',
            '%s = pyop "select"(%x, 0, 1) : (tensor<2x5x3xf32>) -> tensor<5x3xf32>',
            '%3 = pyop "addmm"(%b, %s, %y, 0.5, 2.0) : (tensor<4xf32>, tensor<5x3xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>',
            '%u = pyop "unsqueeze"(%s, 0) : (tensor<5x3xf32>) -> tensor<1x5x3xf32>',
            '%4 = pyop "matmul"(%u, %z) : (tensor<1x5x3xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>',
        ], ["0", "1", "2", "3", "4"], mm,
        ["linear with a [out, in] weight and bias on a 3-D input, matmul of a batch by a",
         "matrix, bmm, addmm with beta and alpha, matmul broadcasting a batch of 1."])])

    xv = torch.arange(24, dtype=torch.float32).reshape(2, 3, 4)
    emb = torch.arange(15, dtype=torch.float32).reshape(5, 3) * 0.5
    idx = torch.tensor([[4, 0], [2, 2]])
    def views(x, e, i):
        return [F.embedding(i, e), x.permute(2, 0, 1), x[:, 1:3:1, ::2], x.view(4, 6),
                x.transpose(0, 1).contiguous(), x[1].unsqueeze(1).expand(3, 2, 4),
                x.flatten(1).narrow(1, 5, 3)]
    write(build, os.path.join(here, "run-views.mlir"), "Views and embedding, numerically.", [case(
        "views", [("x", xv), ("e", emb), ("i", idx)], [
            '%0 = pyop "embedding"(%e, %i) : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>',
            '%1 = pyop "permute"(%x, (2, 0, 1)) : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>',
            '%s = pyop "slice"(%x, 1, 1, 3, 1) : (tensor<2x3x4xf32>) -> tensor<2x2x4xf32>',
            '%2 = pyop "slice"(%s, 2, None, None, 2) : (tensor<2x2x4xf32>) -> tensor<2x2x2xf32>',
            '%3 = pyop "view"(%x, (4, 6)) : (tensor<2x3x4xf32>) -> tensor<4x6xf32>',
            '%t = pyop "transpose"(%x, 0, 1) : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>',
            '%4 = pyop "contiguous"(%t) : (tensor<3x2x4xf32>) -> tensor<3x2x4xf32>',
            '%r = pyop "select"(%x, 0, 1) : (tensor<2x3x4xf32>) -> tensor<3x4xf32>',
            '%q = pyop "unsqueeze"(%r, 1) : (tensor<3x4xf32>) -> tensor<3x1x4xf32>',
            '%5 = pyop "expand"(%q, (3, 2, 4)) : (tensor<3x1x4xf32>) -> tensor<3x2x4xf32>',
            '%f = pyop "flatten"(%x, 1) : (tensor<2x3x4xf32>) -> tensor<2x12xf32>',
            '%6 = pyop "narrow"(%f, 1, 5, 3) : (tensor<2x12xf32>) -> tensor<2x3xf32>',
        ], ["0", "1", "2", "3", "4", "5", "6"], views,
        ["embedding gathers rows, permute, slice with start/end and with a step, a view",
         "regrouping across dims, transpose + contiguous, select + unsqueeze + expand,",
         "flatten + narrow."])])

    inf, nan = float("inf"), float("nan")
    xs = torch.tensor([[-2.5, -1.0, -0.0, 0.0], [0.5, 1.0, 2.0, 7.25], [30.0, inf, -inf, nan]])
    ys = torch.tensor([[-1.0, -0.999, -0.5, -0.0], [0.25, 0.9999, 1.0, 1.5], [1e-3, nan, -2.0, 0.7]])
    zs = torch.tensor([[1.5, -0.25, 3.0, 2.0], [0.5, 0.5, 0.5, 0.5], [-4.0, 8.0, 1.0, -2.0]])
    # trigamma's poles are "a very large number" that depends on the
    # precision of sin(pi x): polygamma gets its own values.
    ps = torch.tensor([[-2.5, -0.5, 0.25, 1e-3], [0.5, 1.0, 2.0, 7.25], [30.0, inf, 1e4, nan]])
    def special(x, y, z, p):
        mx, mi = torch.max(x, 1), torch.min(x, 0, keepdim=True)
        return [torch.lgamma(x), torch.digamma(x), torch.erfinv(y), torch.polygamma(1, p),
                torch.polygamma(3, p), torch.hypot(x, y), torch.signbit(x).float(), torch.ones_like(x),
                torch.argmax(x, 1).float(), torch.argmax(x).float(), torch.argmin(x, 0, keepdim=True).float(),
                mx.values, mx.indices.float(), mi.values, mi.indices.float(),
                torch.var(z, 1), torch.var(z, None, correction=0, keepdim=True),
                torch.cumsum(z, 1), torch.cumprod(z, 0)]
    write(build, os.path.join(here, "run-special.mlir"),
          "Special functions, argmax/argmin, max.dim/min.dim, var and the scans, numerically.", [case(
        "special", [("x", xs), ("y", ys), ("z", zs), ("p", ps)], [
            '%0 = pyop "lgamma"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>',
            '%1 = pyop "digamma"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>',
            '%2 = pyop "erfinv"(%y) : (tensor<3x4xf32>) -> tensor<3x4xf32>',
            '%3 = pyop "polygamma"(1, %p) : (tensor<3x4xf32>) -> tensor<3x4xf32>',
            '%4 = pyop "polygamma"(3, %p) : (tensor<3x4xf32>) -> tensor<3x4xf32>',
            '%5 = pyop "hypot"(%x, %y) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>',
            '%sb = pyop "signbit"(%x) : (tensor<3x4xf32>) -> tensor<3x4xi1>',
            '%6 = pyop "_to_copy"(%sb, "torch.float32") : (tensor<3x4xi1>) -> tensor<3x4xf32>',
            '%7 = pyop "ones_like"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>',
            '%am = pyop "argmax"(%x, 1) : (tensor<3x4xf32>) -> tensor<3xi64>',
            '%8 = pyop "_to_copy"(%am, "torch.float32") : (tensor<3xi64>) -> tensor<3xf32>',
            '%aa = pyop "argmax"(%x) : (tensor<3x4xf32>) -> tensor<i64>',
            '%9 = pyop "_to_copy"(%aa, "torch.float32") : (tensor<i64>) -> tensor<f32>',
            '%an = pyop "argmin"(%x, 0, True) : (tensor<3x4xf32>) -> tensor<1x4xi64>',
            '%10 = pyop "_to_copy"(%an, "torch.float32") : (tensor<1x4xi64>) -> tensor<1x4xf32>',
            '%mx:2 = pyop "max"(%x, 1) : (tensor<3x4xf32>) -> (tensor<3xf32>, tensor<3xi64>)',
            '%11 = pyop "_to_copy"(%mx#1, "torch.float32") : (tensor<3xi64>) -> tensor<3xf32>',
            '%mi:2 = pyop "min"(%x, 0, True) : (tensor<3x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xi64>)',
            '%12 = pyop "_to_copy"(%mi#1, "torch.float32") : (tensor<1x4xi64>) -> tensor<1x4xf32>',
            '%13 = pyop "var"(%z, 1) : (tensor<3x4xf32>) -> tensor<3xf32>',
            '%14 = pyop "var"(%z, None, 0, True) : (tensor<3x4xf32>) -> tensor<1x1xf32>',
            '%15 = pyop "cumsum"(%z, 1) : (tensor<3x4xf32>) -> tensor<3x4xf32>',
            '%16 = pyop "cumprod"(%z, 0) : (tensor<3x4xf32>) -> tensor<3x4xf32>',
        ], ["0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "mx#0", "11", "mi#0", "12", "13", "14",
            "15", "16"],
        special,
        ["lgamma and digamma at a negative non-integer, the poles -1 and +-0, the zeros 1 and 2,",
         "large, +-inf and NaN; polygamma(1) and (3) on both sides of 0, tiny, large, inf, NaN; erfinv at +-1, near them, outside and at NaN;",
         "hypot with inf and NaN operands; signbit of -0.0 and -inf; ones_like; argmax along a",
         "dim with NaN (the maximum) and over everything, argmin keepdim; max.dim and min.dim",
         "keepdim (values, then indices: the first extreme); var with the default correction",
         "and with correction 0 over every dim, keepdim; cumsum and cumprod."])])


if __name__ == "__main__":
    main()
