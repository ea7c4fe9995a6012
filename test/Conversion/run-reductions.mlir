// Reductions, softmax and layer_norm, numerically.
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

// sum with keepdim, mean over everything, amax over the last dim, softmax and
// log_softmax, layer_norm with weight and bias and over two dims without.

trace.graph @red(%x: tensor<2x3x4xf32>, %w: tensor<4xf32>, %b: tensor<4xf32>) -> (tensor<2x1x4xf32>, tensor<f32>, tensor<2x3xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>) {
  %0 = pyop "sum"(%x, 1, True) : (tensor<2x3x4xf32>) -> tensor<2x1x4xf32>
  %1 = pyop "mean"(%x) : (tensor<2x3x4xf32>) -> tensor<f32>
  %2 = pyop "amax"(%x, -1) : (tensor<2x3x4xf32>) -> tensor<2x3xf32>
  %3 = pyop "softmax"(%x, -1) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %4 = pyop "log_softmax"(%x, 1) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  %5 = pyop "layer_norm"(%x, [4], %w, %b, 1.0e-05, True) : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<2x3x4xf32>
  %6 = pyop "layer_norm"(%x, [3, 4], None, None, 1.0e-05, True) : (tensor<2x3x4xf32>) -> tensor<2x3x4xf32>
  ret %0, %1, %2, %3, %4, %5, %6 : tensor<2x1x4xf32>, tensor<f32>, tensor<2x3xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>
}

// MAIN: func.func @main() {
// MAIN:   %x = arith.constant dense<[[[-2.5, -2.25, -2.0, -1.75], [-1.5, -1.25, -1.0, -0.75], [-0.5, -0.25, 0.0, 0.25]], [[0.5, 0.75, 1.0, 1.25], [1.5, 1.75, 2.0, 2.25], [2.5, 2.75, 3.0, 3.25]]]> : tensor<2x3x4xf32>
// MAIN:   %w = arith.constant dense<[1.0, 0.5, -1.0, 2.0]> : tensor<4xf32>
// MAIN:   %b = arith.constant dense<[0.0, 0.25, 0.5, -0.5]> : tensor<4xf32>
// MAIN:   %r0, %r1, %r2, %r3, %r4, %r5, %r6 = call @red(%x, %w, %b) : (tensor<2x3x4xf32>, tensor<4xf32>, tensor<4xf32>) -> (tensor<2x1x4xf32>, tensor<f32>, tensor<2x3xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>)
// MAIN:   %u0 = tensor.cast %r0 : tensor<2x1x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
// MAIN:   %u1 = tensor.cast %r1 : tensor<f32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
// MAIN:   %u2 = tensor.cast %r2 : tensor<2x3xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
// MAIN:   %u3 = tensor.cast %r3 : tensor<2x3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
// MAIN:   %u4 = tensor.cast %r4 : tensor<2x3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
// MAIN:   %u5 = tensor.cast %r5 : tensor<2x3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()
// MAIN:   %u6 = tensor.cast %r6 : tensor<2x3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u6) : (tensor<*xf32>) -> ()
// MAIN:   return
// MAIN: }
// MAIN: func.func private @printMemrefF32(tensor<*xf32>)

// FP: Unranked Memref {{.*}} sizes = [2, 1, 4]
// FP-NEXT: [[[-4.5,    -3.75,    -3,    -2.25]],
// FP-NEXT: [[4.5,    5.25,    6,    6.75]]]
// FP: Unranked Memref {{.*}} sizes = []
// FP-NEXT: [0.375]
// FP: Unranked Memref {{.*}} sizes = [2, 3]
// FP-NEXT: [[-1.75,   -0.75,   0.25],
// FP-NEXT: [1.25,   2.25,   3.25]]
// FP: Unranked Memref {{.*}} sizes = [2, 3, 4]
// FP-NEXT: [[[0.165296,    0.212244,    0.272527,    0.349932],
// FP-NEXT: [0.165296,    0.212244,    0.272527,    0.349932],
// FP-NEXT: [0.165296,    0.212244,    0.272527,    0.349932]],
// FP-NEXT: [[0.165296,    0.212244,    0.272527,    0.349932],
// FP-NEXT: [0.165296,    0.212244,    0.272527,    0.349932],
// FP-NEXT: [0.165296,    0.212244,    0.272527,    0.349932]]]
// FP: Unranked Memref {{.*}} sizes = [2, 3, 4]
// FP-NEXT: [[[-2.40761,    -2.40761,    -2.40761,    -2.40761],
// FP-NEXT: [-1.40761,    -1.40761,    -1.40761,    -1.40761],
// FP-NEXT: [-0.407606,    -0.407606,    -0.407606,    -0.407606]],
// FP-NEXT: [[-2.40761,    -2.40761,    -2.40761,    -2.40761],
// FP-NEXT: [-1.40761,    -1.40761,    -1.40761,    -1.40761],
// FP-NEXT: [-0.407606,    -0.407606,    -0.407606,    -0.407606]]]
// FP: Unranked Memref {{.*}} sizes = [2, 3, 4]
// FP-NEXT: [[[-1.34155,    0.0264075,    0.052815,    2.18311],
// FP-NEXT: [-1.34155,    0.0264075,    0.052815,    2.18311],
// FP-NEXT: [-1.34155,    0.0264075,    0.052815,    2.18311]],
// FP-NEXT: [[-1.34155,    0.0264075,    0.052815,    2.18311],
// FP-NEXT: [-1.34155,    0.0264075,    0.052815,    2.18311],
// FP-NEXT: [-1.34155,    0.0264075,    0.052815,    2.18311]]]
// FP: Unranked Memref {{.*}} sizes = [2, 3, 4]
// FP-NEXT: [[[-1.59324,    -1.30356,    -1.01388,    -0.724202],
// FP-NEXT: [-0.434521,    -0.14484,    0.14484,    0.434521],
// FP-NEXT: [0.724202,    1.01388,    1.30356,    1.59324]],
// FP-NEXT: [[-1.59324,    -1.30356,    -1.01388,    -0.724202],
// FP-NEXT: [-0.434521,    -0.14484,    0.14484,    0.434521],
// FP-NEXT: [0.724202,    1.01388,    1.30356,    1.59324]]]
