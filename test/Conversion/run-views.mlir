// Views and embedding, numerically.
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

// embedding gathers rows, permute, slice with start/end and with a step, a view
// regrouping across dims, transpose + contiguous, select + unsqueeze + expand,
// flatten + narrow.

trace.graph @views(%x: tensor<2x3x4xf32>, %e: tensor<5x3xf32>, %i: tensor<2x2xi64>) -> (tensor<2x2x3xf32>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<4x6xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<2x3xf32>) {
  %0 = pyop "embedding"(%e, %i) : (tensor<5x3xf32>, tensor<2x2xi64>) -> tensor<2x2x3xf32>
  %1 = pyop "permute"(%x, (2, 0, 1)) : (tensor<2x3x4xf32>) -> tensor<4x2x3xf32>
  %s = pyop "slice"(%x, 1, 1, 3, 1) : (tensor<2x3x4xf32>) -> tensor<2x2x4xf32>
  %2 = pyop "slice"(%s, 2, None, None, 2) : (tensor<2x2x4xf32>) -> tensor<2x2x2xf32>
  %3 = pyop "view"(%x, (4, 6)) : (tensor<2x3x4xf32>) -> tensor<4x6xf32>
  %t = pyop "transpose"(%x, 0, 1) : (tensor<2x3x4xf32>) -> tensor<3x2x4xf32>
  %4 = pyop "contiguous"(%t) : (tensor<3x2x4xf32>) -> tensor<3x2x4xf32>
  %r = pyop "select"(%x, 0, 1) : (tensor<2x3x4xf32>) -> tensor<3x4xf32>
  %q = pyop "unsqueeze"(%r, 1) : (tensor<3x4xf32>) -> tensor<3x1x4xf32>
  %5 = pyop "expand"(%q, (3, 2, 4)) : (tensor<3x1x4xf32>) -> tensor<3x2x4xf32>
  %f = pyop "flatten"(%x, 1) : (tensor<2x3x4xf32>) -> tensor<2x12xf32>
  %6 = pyop "narrow"(%f, 1, 5, 3) : (tensor<2x12xf32>) -> tensor<2x3xf32>
  ret %0, %1, %2, %3, %4, %5, %6 : tensor<2x2x3xf32>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<4x6xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<2x3xf32>
}

// MAIN: func.func @main() {
// MAIN:   %x = arith.constant dense<[[[0.0, 1.0, 2.0, 3.0], [4.0, 5.0, 6.0, 7.0], [8.0, 9.0, 10.0, 11.0]], [[12.0, 13.0, 14.0, 15.0], [16.0, 17.0, 18.0, 19.0], [20.0, 21.0, 22.0, 23.0]]]> : tensor<2x3x4xf32>
// MAIN:   %e = arith.constant dense<[[0.0, 0.5, 1.0], [1.5, 2.0, 2.5], [3.0, 3.5, 4.0], [4.5, 5.0, 5.5], [6.0, 6.5, 7.0]]> : tensor<5x3xf32>
// MAIN:   %i = arith.constant dense<[[4, 0], [2, 2]]> : tensor<2x2xi64>
// MAIN:   %r0, %r1, %r2, %r3, %r4, %r5, %r6 = call @views(%x, %e, %i) : (tensor<2x3x4xf32>, tensor<5x3xf32>, tensor<2x2xi64>) -> (tensor<2x2x3xf32>, tensor<4x2x3xf32>, tensor<2x2x2xf32>, tensor<4x6xf32>, tensor<3x2x4xf32>, tensor<3x2x4xf32>, tensor<2x3xf32>)
// MAIN:   %u0 = tensor.cast %r0 : tensor<2x2x3xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
// MAIN:   %u1 = tensor.cast %r1 : tensor<4x2x3xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
// MAIN:   %u2 = tensor.cast %r2 : tensor<2x2x2xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
// MAIN:   %u3 = tensor.cast %r3 : tensor<4x6xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
// MAIN:   %u4 = tensor.cast %r4 : tensor<3x2x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
// MAIN:   %u5 = tensor.cast %r5 : tensor<3x2x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()
// MAIN:   %u6 = tensor.cast %r6 : tensor<2x3xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u6) : (tensor<*xf32>) -> ()
// MAIN:   return
// MAIN: }
// MAIN: func.func private @printMemrefF32(tensor<*xf32>)

// FP: Unranked Memref {{.*}} sizes = [2, 2, 3]
// FP-NEXT: [[[6,    6.5,    7],
// FP-NEXT: [0,    0.5,    1]],
// FP-NEXT: [[3,    3.5,    4],
// FP-NEXT: [3,    3.5,    4]]]
// FP: Unranked Memref {{.*}} sizes = [4, 2, 3]
// FP-NEXT: [[[0,    4,    8],
// FP-NEXT: [12,    16,    20]],
// FP-NEXT: [[1,    5,    9],
// FP-NEXT: [13,    17,    21]],
// FP-NEXT: [[2,    6,    10],
// FP-NEXT: [14,    18,    22]],
// FP-NEXT: [[3,    7,    11],
// FP-NEXT: [15,    19,    23]]]
// FP: Unranked Memref {{.*}} sizes = [2, 2, 2]
// FP-NEXT: [[[4,    6],
// FP-NEXT: [8,    10]],
// FP-NEXT: [[16,    18],
// FP-NEXT: [20,    22]]]
// FP: Unranked Memref {{.*}} sizes = [4, 6]
// FP-NEXT: [[0,   1,   2,   3,   4,   5],
// FP-NEXT: [6,   7,   8,   9,   10,   11],
// FP-NEXT: [12,   13,   14,   15,   16,   17],
// FP-NEXT: [18,   19,   20,   21,   22,   23]]
// FP: Unranked Memref {{.*}} sizes = [3, 2, 4]
// FP-NEXT: [[[0,    1,    2,    3],
// FP-NEXT: [12,    13,    14,    15]],
// FP-NEXT: [[4,    5,    6,    7],
// FP-NEXT: [16,    17,    18,    19]],
// FP-NEXT: [[8,    9,    10,    11],
// FP-NEXT: [20,    21,    22,    23]]]
// FP: Unranked Memref {{.*}} sizes = [3, 2, 4]
// FP-NEXT: [[[12,    13,    14,    15],
// FP-NEXT: [12,    13,    14,    15]],
// FP-NEXT: [[16,    17,    18,    19],
// FP-NEXT: [16,    17,    18,    19]],
// FP-NEXT: [[20,    21,    22,    23],
// FP-NEXT: [20,    21,    22,    23]]]
// FP: Unranked Memref {{.*}} sizes = [2, 3]
// FP-NEXT: [[5,   6,   7],
// FP-NEXT: [17,   18,   19]]
