// The matmul family, numerically.
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

// linear with a [out, in] weight and bias on a 3-D input, matmul of a batch by a
// matrix, bmm, addmm with beta and alpha, matmul broadcasting a batch of 1.

trace.graph @mm(%x: tensor<2x5x3xf32>, %w: tensor<4x3xf32>, %b: tensor<4xf32>, %y: tensor<3x4xf32>, %z: tensor<2x3x4xf32>) -> (tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<5x4xf32>, tensor<2x5x4xf32>) {
  %0 = pyop "linear"(%x, %w, %b) : (tensor<2x5x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x5x4xf32>
  %1 = pyop "matmul"(%x, %y) : (tensor<2x5x3xf32>, tensor<3x4xf32>) -> tensor<2x5x4xf32>
  %2 = pyop "bmm"(%x, %z) : (tensor<2x5x3xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  %s = pyop "select"(%x, 0, 1) : (tensor<2x5x3xf32>) -> tensor<5x3xf32>
  %3 = pyop "addmm"(%b, %s, %y, 0.5, 2.0) : (tensor<4xf32>, tensor<5x3xf32>, tensor<3x4xf32>) -> tensor<5x4xf32>
  %u = pyop "unsqueeze"(%s, 0) : (tensor<5x3xf32>) -> tensor<1x5x3xf32>
  %4 = pyop "matmul"(%u, %z) : (tensor<1x5x3xf32>, tensor<2x3x4xf32>) -> tensor<2x5x4xf32>
  ret %0, %1, %2, %3, %4 : tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<5x4xf32>, tensor<2x5x4xf32>
}

// MAIN: func.func @main() {
// MAIN:   %x = arith.constant dense<[[[-1.0, -0.875, -0.75], [-0.625, -0.5, -0.375], [-0.25, -0.125, 0.0], [0.125, 0.25, 0.375], [0.5, 0.625, 0.75]], [[0.875, 1.0, 1.125], [1.25, 1.375, 1.5], [1.625, 1.75, 1.875], [2.0, 2.125, 2.25], [2.375, 2.5, 2.625]]]> : tensor<2x5x3xf32>
// MAIN:   %w = arith.constant dense<[[1.0, 0.5, -1.0], [0.0, 2.0, 1.0], [-0.5, 0.25, 0.75], [1.5, -1.0, 0.5]]> : tensor<4x3xf32>
// MAIN:   %b = arith.constant dense<[0.5, -0.25, 1.0, 0.0]> : tensor<4xf32>
// MAIN:   %y = arith.constant dense<[[1.0, -1.0, 0.5, 2.0], [0.25, 0.5, -2.0, 1.0], [-1.0, 0.0, 1.0, 0.5]]> : tensor<3x4xf32>
// MAIN:   %z = arith.constant dense<[[[-3.0, -2.5, -2.0, -1.5], [-1.0, -0.5, 0.0, 0.5], [1.0, 1.5, 2.0, 2.5]], [[3.0, 3.5, 4.0, 4.5], [5.0, 5.5, 6.0, 6.5], [7.0, 7.5, 8.0, 8.5]]]> : tensor<2x3x4xf32>
// MAIN:   %r0, %r1, %r2, %r3, %r4 = call @mm(%x, %w, %b, %y, %z) : (tensor<2x5x3xf32>, tensor<4x3xf32>, tensor<4xf32>, tensor<3x4xf32>, tensor<2x3x4xf32>) -> (tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<2x5x4xf32>, tensor<5x4xf32>, tensor<2x5x4xf32>)
// MAIN:   %u0 = tensor.cast %r0 : tensor<2x5x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
// MAIN:   %u1 = tensor.cast %r1 : tensor<2x5x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
// MAIN:   %u2 = tensor.cast %r2 : tensor<2x5x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
// MAIN:   %u3 = tensor.cast %r3 : tensor<5x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
// MAIN:   %u4 = tensor.cast %r4 : tensor<2x5x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
// MAIN:   return
// MAIN: }
// MAIN: func.func private @printMemrefF32(tensor<*xf32>)

// FP: Unranked Memref {{.*}} sizes = [2, 5, 4]
// FP-NEXT: [[[-0.1875,    -2.75,    0.71875,    -1],
// FP-NEXT: [0,    -1.625,    0.90625,    -0.625],
// FP-NEXT: [0.1875,    -0.5,    1.09375,    -0.25],
// FP-NEXT: [0.375,    0.625,    1.28125,    0.125],
// FP-NEXT: [0.5625,    1.75,    1.46875,    0.5]],
// FP-NEXT: [[0.75,    2.875,    1.65625,    0.875],
// FP-NEXT: [0.9375,    4,    1.84375,    1.25],
// FP-NEXT: [1.125,    5.125,    2.03125,    1.625],
// FP-NEXT: [1.3125,    6.25,    2.21875,    2],
// FP-NEXT: [1.5,    7.375,    2.40625,    2.375]]]
// FP: Unranked Memref {{.*}} sizes = [2, 5, 4]
// FP-NEXT: [[[-0.46875,    0.5625,    0.5,    -3.25],
// FP-NEXT: [-0.375,    0.375,    0.3125,    -1.9375],
// FP-NEXT: [-0.28125,    0.1875,    0.125,    -0.625],
// FP-NEXT: [-0.1875,    0,    -0.0625,    0.6875],
// FP-NEXT: [-0.09375,    -0.1875,    -0.25,    2]],
// FP-NEXT: [[0,    -0.375,    -0.4375,    3.3125],
// FP-NEXT: [0.09375,    -0.5625,    -0.625,    4.625],
// FP-NEXT: [0.1875,    -0.75,    -0.8125,    5.9375],
// FP-NEXT: [0.28125,    -0.9375,    -1,    7.25],
// FP-NEXT: [0.375,    -1.125,    -1.1875,    8.5625]]]
// FP: Unranked Memref {{.*}} sizes = [2, 5, 4]
// FP-NEXT: [[[3.125,    1.8125,    0.5,    -0.8125],
// FP-NEXT: [2,    1.25,    0.5,    -0.25],
// FP-NEXT: [0.875,    0.6875,    0.5,    0.3125],
// FP-NEXT: [-0.25,    0.125,    0.5,    0.875],
// FP-NEXT: [-1.375,    -0.4375,    0.5,    1.4375]],
// FP-NEXT: [[15.5,    17,    18.5,    20],
// FP-NEXT: [21.125,    23.1875,    25.25,    27.3125],
// FP-NEXT: [26.75,    29.375,    32,    34.625],
// FP-NEXT: [32.375,    35.5625,    38.75,    41.9375],
// FP-NEXT: [38,    41.75,    45.5,    49.25]]]
// FP: Unranked Memref {{.*}} sizes = [5, 4]
// FP-NEXT: [[0.25,   -0.875,   -0.375,   6.625],
// FP-NEXT: [0.4375,   -1.25,   -0.75,   9.25],
// FP-NEXT: [0.625,   -1.625,   -1.125,   11.875],
// FP-NEXT: [0.8125,   -2,   -1.5,   14.5],
// FP-NEXT: [1,   -2.375,   -1.875,   17.125]]
// FP: Unranked Memref {{.*}} sizes = [2, 5, 4]
// FP-NEXT: [[[-2.5,    -1,    0.5,    2],
// FP-NEXT: [-3.625,    -1.5625,    0.5,    2.5625],
// FP-NEXT: [-4.75,    -2.125,    0.5,    3.125],
// FP-NEXT: [-5.875,    -2.6875,    0.5,    3.6875],
// FP-NEXT: [-7,    -3.25,    0.5,    4.25]],
// FP-NEXT: [[15.5,    17,    18.5,    20],
// FP-NEXT: [21.125,    23.1875,    25.25,    27.3125],
// FP-NEXT: [26.75,    29.375,    32,    34.625],
// FP-NEXT: [32.375,    35.5625,    38.75,    41.9375],
// FP-NEXT: [38,    41.75,    45.5,    49.25]]]
