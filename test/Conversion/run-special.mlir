// Special functions, argmax/argmin, max.dim/min.dim, var and the scans, numerically.
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

// lgamma and digamma at a negative non-integer, the poles -1 and +-0, the zeros 1 and 2,
// large, +-inf and NaN; polygamma(1) and (3) on both sides of 0, tiny, large, inf, NaN; erfinv at +-1, near them, outside and at NaN;
// hypot with inf and NaN operands; signbit of -0.0 and -inf; ones_like; argmax along a
// dim with NaN (the maximum) and over everything, argmin keepdim; max.dim and min.dim
// keepdim (values, then indices: the first extreme); var with the default correction
// and with correction 0 over every dim, keepdim; cumsum and cumprod.

trace.graph @special(%x: tensor<3x4xf32>, %y: tensor<3x4xf32>, %z: tensor<3x4xf32>, %p: tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<f32>, tensor<1x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<3xf32>, tensor<1x1xf32>, tensor<3x4xf32>, tensor<3x4xf32>) {
  %0 = pyop "lgamma"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %1 = pyop "digamma"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %2 = pyop "erfinv"(%y) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %3 = pyop "polygamma"(1, %p) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %4 = pyop "polygamma"(3, %p) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %5 = pyop "hypot"(%x, %y) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  %sb = pyop "signbit"(%x) : (tensor<3x4xf32>) -> tensor<3x4xi1>
  %6 = pyop "_to_copy"(%sb, "torch.float32") : (tensor<3x4xi1>) -> tensor<3x4xf32>
  %7 = pyop "ones_like"(%x) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %am = pyop "argmax"(%x, 1) : (tensor<3x4xf32>) -> tensor<3xi64>
  %8 = pyop "_to_copy"(%am, "torch.float32") : (tensor<3xi64>) -> tensor<3xf32>
  %aa = pyop "argmax"(%x) : (tensor<3x4xf32>) -> tensor<i64>
  %9 = pyop "_to_copy"(%aa, "torch.float32") : (tensor<i64>) -> tensor<f32>
  %an = pyop "argmin"(%x, 0, True) : (tensor<3x4xf32>) -> tensor<1x4xi64>
  %10 = pyop "_to_copy"(%an, "torch.float32") : (tensor<1x4xi64>) -> tensor<1x4xf32>
  %mx:2 = pyop "max"(%x, 1) : (tensor<3x4xf32>) -> (tensor<3xf32>, tensor<3xi64>)
  %11 = pyop "_to_copy"(%mx#1, "torch.float32") : (tensor<3xi64>) -> tensor<3xf32>
  %mi:2 = pyop "min"(%x, 0, True) : (tensor<3x4xf32>) -> (tensor<1x4xf32>, tensor<1x4xi64>)
  %12 = pyop "_to_copy"(%mi#1, "torch.float32") : (tensor<1x4xi64>) -> tensor<1x4xf32>
  %13 = pyop "var"(%z, 1) : (tensor<3x4xf32>) -> tensor<3xf32>
  %14 = pyop "var"(%z, None, 0, True) : (tensor<3x4xf32>) -> tensor<1x1xf32>
  %15 = pyop "cumsum"(%z, 1) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  %16 = pyop "cumprod"(%z, 0) : (tensor<3x4xf32>) -> tensor<3x4xf32>
  ret %0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %mx#0, %11, %mi#0, %12, %13, %14, %15, %16 : tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<f32>, tensor<1x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<3xf32>, tensor<1x1xf32>, tensor<3x4xf32>, tensor<3x4xf32>
}

// MAIN: func.func @main() {
// MAIN:   %x = arith.constant dense<[[-2.5, -1.0, -0.0, 0.0], [0.5, 1.0, 2.0, 7.25], [30.0, 0x7F800000, 0xFF800000, 0x7FC00000]]> : tensor<3x4xf32>
// MAIN:   %y = arith.constant dense<[[-1.0, -0.9990000128746033, -0.5, -0.0], [0.25, 0.9998999834060669, 1.0, 1.5], [0.0010000000474974513, 0x7FC00000, -2.0, 0.699999988079071]]> : tensor<3x4xf32>
// MAIN:   %z = arith.constant dense<[[1.5, -0.25, 3.0, 2.0], [0.5, 0.5, 0.5, 0.5], [-4.0, 8.0, 1.0, -2.0]]> : tensor<3x4xf32>
// MAIN:   %p = arith.constant dense<[[-2.5, -0.5, 0.25, 0.0010000000474974513], [0.5, 1.0, 2.0, 7.25], [30.0, 0x7F800000, 10000.0, 0x7FC00000]]> : tensor<3x4xf32>
// MAIN:   %r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13, %r14, %r15, %r16, %r17, %r18 = call @special(%x, %y, %z, %p) : (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>) -> (tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3x4xf32>, tensor<3xf32>, tensor<f32>, tensor<1x4xf32>, tensor<3xf32>, tensor<3xf32>, tensor<1x4xf32>, tensor<1x4xf32>, tensor<3xf32>, tensor<1x1xf32>, tensor<3x4xf32>, tensor<3x4xf32>)
// MAIN:   %u0 = tensor.cast %r0 : tensor<3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u0) : (tensor<*xf32>) -> ()
// MAIN:   %u1 = tensor.cast %r1 : tensor<3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u1) : (tensor<*xf32>) -> ()
// MAIN:   %u2 = tensor.cast %r2 : tensor<3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u2) : (tensor<*xf32>) -> ()
// MAIN:   %u3 = tensor.cast %r3 : tensor<3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u3) : (tensor<*xf32>) -> ()
// MAIN:   %u4 = tensor.cast %r4 : tensor<3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u4) : (tensor<*xf32>) -> ()
// MAIN:   %u5 = tensor.cast %r5 : tensor<3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u5) : (tensor<*xf32>) -> ()
// MAIN:   %u6 = tensor.cast %r6 : tensor<3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u6) : (tensor<*xf32>) -> ()
// MAIN:   %u7 = tensor.cast %r7 : tensor<3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u7) : (tensor<*xf32>) -> ()
// MAIN:   %u8 = tensor.cast %r8 : tensor<3xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u8) : (tensor<*xf32>) -> ()
// MAIN:   %u9 = tensor.cast %r9 : tensor<f32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u9) : (tensor<*xf32>) -> ()
// MAIN:   %u10 = tensor.cast %r10 : tensor<1x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u10) : (tensor<*xf32>) -> ()
// MAIN:   %u11 = tensor.cast %r11 : tensor<3xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u11) : (tensor<*xf32>) -> ()
// MAIN:   %u12 = tensor.cast %r12 : tensor<3xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u12) : (tensor<*xf32>) -> ()
// MAIN:   %u13 = tensor.cast %r13 : tensor<1x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u13) : (tensor<*xf32>) -> ()
// MAIN:   %u14 = tensor.cast %r14 : tensor<1x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u14) : (tensor<*xf32>) -> ()
// MAIN:   %u15 = tensor.cast %r15 : tensor<3xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u15) : (tensor<*xf32>) -> ()
// MAIN:   %u16 = tensor.cast %r16 : tensor<1x1xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u16) : (tensor<*xf32>) -> ()
// MAIN:   %u17 = tensor.cast %r17 : tensor<3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u17) : (tensor<*xf32>) -> ()
// MAIN:   %u18 = tensor.cast %r18 : tensor<3x4xf32> to tensor<*xf32>
// MAIN:   call @printMemrefF32(%u18) : (tensor<*xf32>) -> ()
// MAIN:   return
// MAIN: }
// MAIN: func.func private @printMemrefF32(tensor<*xf32>)

// FP: Unranked Memref {{.*}} sizes = [3, 4]
// FP-NEXT: [[-0.0562437,   inf,   inf,   inf],
// FP-NEXT: [0.572365,   0,   0,   7.05219],
// FP-NEXT: [71.257,   inf,   inf,   nan]]
// FP: Unranked Memref {{.*}} sizes = [3, 4]
// FP-NEXT: [[1.10316,   nan,   inf,   -inf],
// FP-NEXT: [-1.96351,   -0.577216,   0.422784,   1.91045],
// FP-NEXT: [3.38444,   inf,   nan,   nan]]
// FP: Unranked Memref {{.*}} sizes = [3, 4]
// FP-NEXT: [[-inf,   -2.32676,   -0.476936,   -0],
// FP-NEXT: [0.225312,   2.75104,   inf,   nan],
// FP-NEXT: [0.000886227,   nan,   nan,   0.732869]]
// FP: Unranked Memref {{.*}} sizes = [3, 4]
// FP-NEXT: [[9.53925,   8.9348,   17.1973,   1e+06],
// FP-NEXT: [4.9348,   1.64493,   0.644934,   0.147879],
// FP-NEXT: [0.0338951,   0,   0.000100005,   nan]]
// FP: Unranked Memref {{.*}} sizes = [3, 4]
// FP-NEXT: [[194.748,   193.409,   1538.78,   6e+12],
// FP-NEXT: [97.4091,   6.49394,   0.493939,   0.00643304],
// FP-NEXT: [7.786e-05,   -nan,   2.0003e-12,   nan]]
// FP: Unranked Memref {{.*}} sizes = [3, 4]
// FP-NEXT: [[2.69258,   1.41351,   0.5,   0],
// FP-NEXT: [0.559017,   1.41414,   2.23607,   7.40355],
// FP-NEXT: [30,   inf,   inf,   nan]]
// FP: Unranked Memref {{.*}} sizes = [3, 4]
// FP-NEXT: [[1,   1,   1,   0],
// FP-NEXT: [0,   0,   0,   0],
// FP-NEXT: [0,   0,   1,   0]]
// FP: Unranked Memref {{.*}} sizes = [3, 4]
// FP-NEXT: [[1,   1,   1,   1],
// FP-NEXT: [1,   1,   1,   1],
// FP-NEXT: [1,   1,   1,   1]]
// FP: Unranked Memref {{.*}} sizes = [3]
// FP-NEXT: [2,  3,  3]
// FP: Unranked Memref {{.*}} sizes = []
// FP-NEXT: [11]
// FP: Unranked Memref {{.*}} sizes = [1, 4]
// FP-NEXT: [[0,   0,   2,   2]]
// FP: Unranked Memref {{.*}} sizes = [3]
// FP-NEXT: [-0,  7.25,  nan]
// FP: Unranked Memref {{.*}} sizes = [3]
// FP-NEXT: [2,  3,  3]
// FP: Unranked Memref {{.*}} sizes = [1, 4]
// FP-NEXT: [[-2.5,   -1,   -inf,   nan]]
// FP: Unranked Memref {{.*}} sizes = [1, 4]
// FP-NEXT: [[0,   0,   2,   2]]
// FP: Unranked Memref {{.*}} sizes = [3]
// FP-NEXT: [1.84896,  0,  27.5833]
// FP: Unranked Memref {{.*}} sizes = [1, 1]
// FP-NEXT: [[7.5638]]
// FP: Unranked Memref {{.*}} sizes = [3, 4]
// FP-NEXT: [[1.5,   1.25,   4.25,   6.25],
// FP-NEXT: [0.5,   1,   1.5,   2],
// FP-NEXT: [-4,   4,   5,   3]]
// FP: Unranked Memref {{.*}} sizes = [3, 4]
// FP-NEXT: [[1.5,   -0.25,   3,   2],
// FP-NEXT: [0.75,   -0.125,   1.5,   1],
// FP-NEXT: [-3,   -1,   1.5,   -2]]
