// Elementwise ops, numerically.
// Lowered by --convert-trace-to-linalg and run on the CPU through the upstream
// bufferization/LLVM pipeline; every printed value is PyTorch's result for the
// same graph (checked to 1e-5 by Inputs/gen_run_tests.py, which wrote this file), and
// the printed values are compared to 1e-5 too (%fpcheck: libm differs by CPU).
// The `// MAIN:` lines are a driver appended to the lowered module: a func.call
// cannot reference the trace.graph before it is lowered.
// RUN: trace-opt %s -convert-trace-to-linalg | grep -v '^$' | sed '$d' > %t.mlir
// RUN: sed -n 's|^// MAIN: ||p' %s >> %t.mlir
// RUN: echo '}' >> %t.mlir
// RUN: mlir-opt %t.mlir %linalg-to-llvm | %run-main | %fpcheck %s

// add with alpha and a broadcast [3], sub of a number, mul by a promoted i64 [2,1],
// div, both gelu forms, sigmoid, pow, where on a mask, neg/relu/tanh/exp, abs/sqrt,
// log and rsqrt.

trace.graph @ew(%x: tensor<2x3xf32>, %b: tensor<3xf32>, %i: tensor<2x1xi64>, %m: tensor<2x3xi1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>) {
  %0 = pyop "add"(%x, %b, 2.0) : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>
  %1 = pyop "sub"(%0, 1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %2 = pyop "mul"(%1, %i) : (tensor<2x3xf32>, tensor<2x1xi64>) -> tensor<2x3xf32>
  %v = pyop "div"(%2, 2.0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %g = pyop "gelu"(%v) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %t = pyop "gelu"(%v, "tanh") : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %s = pyop "sigmoid"(%t) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %sq = pyop "pow"(%s, 2.0) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %p = pyop "where"(%m, %sq, 0.0) : (tensor<2x3xi1>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %n = pyop "neg"(%g) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %r = pyop "relu"(%n) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %th = pyop "tanh"(%r) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %e = pyop "exp"(%th) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %a = pyop "abs"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %q = pyop "sqrt"(%a) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %l = pyop "log"(%s) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %3 = pyop "add"(%e, %q) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %4 = pyop "add"(%3, %l) : (tensor<2x3xf32>, tensor<2x3xf32>) -> tensor<2x3xf32>
  %u = pyop "rsqrt"(%4) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  ret %v, %g, %p, %u : tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>
}

// MAIN: func.func @main() {
// MAIN:   %x = arith.constant dense<[[1.0, -2.0, 3.0], [0.5, 0.25, -1.5]]> : tensor<2x3xf32>
// MAIN:   %b = arith.constant dense<[0.5, -0.5, 1.0]> : tensor<3xf32>
// MAIN:   %i = arith.constant dense<[[2], [-1]]> : tensor<2x1xi64>
// MAIN:   %m = arith.constant dense<[[true, false, true], [false, true, true]]> : tensor<2x3xi1>
// MAIN:   %r0, %r1, %r2, %r3 = call @ew(%x, %b, %i, %m) : (tensor<2x3xf32>, tensor<3xf32>, tensor<2x1xi64>, tensor<2x3xi1>) -> (tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
// MAIN:   %u0 = tensor.cast %r0 : tensor<2x3xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
// MAIN:   %u1 = tensor.cast %r1 : tensor<2x3xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
// MAIN:   %u2 = tensor.cast %r2 : tensor<2x3xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
// MAIN:   %u3 = tensor.cast %r3 : tensor<2x3xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
// MAIN:   return
// MAIN: }
// MAIN: func.func private @printMemrefF32(tensor<*xf32>)

// FP: Unranked Memref {{.*}} sizes = [2, 3]
// FP-NEXT: [[1,   -4,   4],
// FP-NEXT: [-0.25,   0.875,   0.25]]
// FP: Unranked Memref {{.*}} sizes = [2, 3]
// FP-NEXT: [[0.841345,   -0.000126719,   3.99987],
// FP-NEXT: [-0.100323,   0.708061,   0.149677]]
// FP: Unranked Memref {{.*}} sizes = [2, 3]
// FP-NEXT: [[0.488204,   0,   0.964349],
// FP-NEXT: [0,   0.448831,   0.288744]]
// FP: Unranked Memref {{.*}} sizes = [2, 3]
// FP-NEXT: [[0.780514,   0.762236,   0.60702],
// FP-NEXT: [0.967778,   0.953703,   0.789672]]
