// Work that no parallel loop holds (a reduction into a 0-d result) would
// stay on the host after convert-linalg-to-parallel-loops, reading device
// memory there; the GPU pipeline moves it into one-thread launches instead,
// so the host code only allocates and launches.
// RUN: trace-opt %s --trace-lower-to-gpu="chip=sm_90" --mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s

// CHECK-LABEL: func.func @total(
// CHECK-NOT: memref.load
// CHECK-NOT: memref.store
// CHECK-NOT: scf.for
// The initial value, then the reduction loop nest, each one thread.
// CHECK: gpu.launch_func @total_kernel::@total_kernel blocks in (%[[C1:.*]], %[[C1]], %[[C1]]) threads in (%[[C1]], %[[C1]], %[[C1]])
// CHECK-NOT: memref.store
// CHECK: gpu.launch_func @total_kernel_0::@total_kernel blocks in (%[[C1]], %[[C1]], %[[C1]]) threads in (%[[C1]], %[[C1]], %[[C1]])
// CHECK-NOT: memref.load
// CHECK: return
// CHECK: gpu.func @total_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK: memref.store
// CHECK: gpu.func @total_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK: scf.for
// CHECK: memref.load
trace.graph @total(%x: tensor<64x16xf32> {trace.input = "x"}) -> tensor<f32> {
  %0 = pyop "sum"(%x) : (tensor<64x16xf32>) -> tensor<f32>
  ret %0 : tensor<f32>
}
