// Work that no parallel loop holds (a reduction into a 0-d result, 0-d
// elementwise arithmetic) would stay on the host after
// convert-linalg-to-parallel-loops, reading device memory there; the GPU
// pipeline moves each run of it into a one-thread launch instead, so the
// host code only allocates and launches.
// RUN: trace-opt %s --trace-lower-to-gpu="chip=sm_90" --mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s
// Per op, each such op is one launch the runtime can run.
// RUN: trace-run %s --print-kernel-plan | FileCheck %s --check-prefix=PLAN

// CHECK-LABEL: func.func @scalars(
// CHECK-NOT: memref.load
// CHECK-NOT: memref.store
// CHECK-NOT: scf.for
// CHECK: gpu.launch_func @scalars_kernel::@scalars_kernel blocks in (%[[C1:.*]], %[[C1]], %[[C1]]) threads in (%[[C1]], %[[C1]], %[[C1]])
// CHECK-NOT: memref.load
// CHECK-NOT: memref.store
// CHECK: return
// The initial value, the loop nest of the sum, the division of the mean and
// the 0-d add, in one thread.
// CHECK: gpu.func @scalars_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 1, 1, 1>, known_grid_size = array<i32: 1, 1, 1>}
// CHECK: memref.store
// CHECK: scf.for
// CHECK: scf.for
// CHECK: memref.load
// CHECK: arith.divf
// CHECK: arith.addf
// CHECK: gpu.return

// PLAN: generated kernels for @scalars: 2 of 2 ops, 2 kernels
// PLAN-NEXT: op 0 (scalars__op0_mean): 1 launches, 0 copies, 1 temporary buffers (4 bytes)
// PLAN-NEXT:   scalars__op0_mean_kernel_{{[0-9a-f]+}} grid 1x1x1 block 1x1x1
// PLAN-NEXT: op 1 (scalars__op1_add): 1 launches, 0 copies, 0 temporary buffers (0 bytes)
// PLAN-NEXT:   scalars__op1_add_kernel_{{[0-9a-f]+}} grid 1x1x1 block 1x1x1
trace.graph @scalars(%x: tensor<64x16xf32> {trace.input = "x"}, %y: tensor<f32> {trace.input = "y"}) -> (tensor<f32>, tensor<f32>) {
  %0 = pyop "mean"(%x) : (tensor<64x16xf32>) -> tensor<f32>
  %1 = pyop "add"(%0, %y) : (tensor<f32>, tensor<f32>) -> tensor<f32>
  ret %0, %1 : tensor<f32>, tensor<f32>
}
