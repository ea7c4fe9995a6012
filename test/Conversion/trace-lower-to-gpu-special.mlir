// The special functions and the index reductions through the whole GPU
// pipeline: their f64 code (libdevice's log, tan, sin, erf, erfc, exp and
// pow, the scf loops inside a thread) becomes kernels in gpu.binary fatbins,
// and nothing is left to the runtime.
// RUN: trace-opt %s --trace-lower-to-gpu="chip=sm_90 features=+ptx80 format=fatbin toolkit=/usr/local/cuda" | FileCheck %s
//
// In PTX (format=isa), digamma's recurrence is a loop in the kernel, and the
// arithmetic is in f64.
// RUN: trace-opt %s --trace-lower-to-gpu="chip=sm_90 format=isa" | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: llvm.func @special(
// CHECK-NOT: trace.pyop
// CHECK: gpu.launch_func {{.*}}@special_kernel::@special_kernel
// CHECK-NOT: trace.pyop
// CHECK: gpu.binary @special_kernel [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// CHECK: gpu.binary @special_kernel_15 [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// digamma's kernel reads the f32, computes in f64 with a loop, and rounds.
// PTX: gpu.binary @special_kernel_0 {{.*}}cvt.f64.f32{{.*}}bra.uni{{.*}}cvt.rn.f32.f64
trace.graph @special(%x: tensor<4x8xf32>, %d: tensor<4x8xf64>) -> (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf32>, tensor<4xi64>, tensor<4x1xf64>, tensor<4x1xi64>, tensor<8xf32>) {
  %0 = pyop "lgamma"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %1 = pyop "digamma"(%x) : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %2 = pyop "erfinv"(%d) : (tensor<4x8xf64>) -> tensor<4x8xf64>
  %3 = pyop "polygamma"(2, %d) : (tensor<4x8xf64>) -> tensor<4x8xf64>
  %4 = pyop "hypot"(%x, %x) : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  %5 = pyop "argmax"(%x, 1) : (tensor<4x8xf32>) -> tensor<4xi64>
  %6:2 = pyop "min"(%d, 1, True) : (tensor<4x8xf64>) -> (tensor<4x1xf64>, tensor<4x1xi64>)
  %7 = pyop "var"(%x, 0) : (tensor<4x8xf32>) -> tensor<8xf32>
  ret %0, %1, %2, %3, %4, %5, %6#0, %6#1, %7 : tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x8xf64>, tensor<4x8xf64>, tensor<4x8xf32>, tensor<4xi64>, tensor<4x1xf64>, tensor<4x1xi64>, tensor<8xf32>
}
