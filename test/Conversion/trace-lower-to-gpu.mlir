// The GPU pipeline from linalg on tensors to host LLVM code launching
// kernels held in gpu.binary fatbins.
//
// The whole pipeline for sm_90 and sm_80: every kernel launch survives as
// gpu.launch_func and every outlined module becomes a gpu.binary for the
// requested chip.
// RUN: trace-opt %s --trace-lower-to-gpu="chip=sm_90 features=+ptx80 format=fatbin toolkit=/usr/local/cuda" | FileCheck %s --check-prefixes=CHECK,SM90
// RUN: trace-opt %s --trace-lower-to-gpu="chip=sm_80 features=+ptx80 format=fatbin toolkit=/usr/local/cuda" | FileCheck %s --check-prefixes=CHECK,SM80
//
// The loop mapping, seen right after outlining: parallel loops are tiled
// onto blocks AND threads (32x8 threads per block by default), not run by
// one thread, innermost dimension first: threadIdx.x walks the contiguous
// dimension (128 wide: 4 blocks of 32), y the rows (64: 8 blocks of 8).
// RUN: trace-opt %s --trace-lower-to-gpu="chip=sm_90" --mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s --check-prefix=MAP
//
// The tile-sizes option changes the block shape.
// RUN: trace-opt %s --trace-lower-to-gpu="chip=sm_90 tile-sizes=16,4" --mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s --check-prefix=TILE
//
// merge-kernel-modules (what trace-translate --emit-gpu-binary uses): all
// kernels in one gpu.module, hence one gpu.binary, one loadable fatbin.
// RUN: trace-opt %s --trace-lower-to-gpu="chip=sm_90 merge-kernel-modules" | FileCheck %s --check-prefix=MERGE
//
// PTX only (format=isa) needs no ptxas and keeps the kernel readable.
// RUN: trace-opt %s --trace-lower-to-gpu="chip=sm_90 format=isa" | FileCheck %s --check-prefix=PTX

// CHECK-LABEL: llvm.func @add_relu(
// CHECK: gpu.launch_func @add_relu_kernel::@add_relu_kernel
// SM90: gpu.binary @add_relu_kernel [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">
// SM80: gpu.binary @add_relu_kernel [#gpu.object<#nvvm.target<chip = "sm_80", features = "+ptx80">
// CHECK-LABEL: llvm.func @row_sum(
// CHECK: gpu.launch_func @row_sum_kernel::@row_sum_kernel
// CHECK: gpu.launch_func @row_sum_kernel_0::@row_sum_kernel
// SM90: gpu.binary @row_sum_kernel [#gpu.object<#nvvm.target<chip = "sm_90"
// SM90: gpu.binary @row_sum_kernel_0 [#gpu.object<#nvvm.target<chip = "sm_90"
// SM80: gpu.binary @row_sum_kernel [#gpu.object<#nvvm.target<chip = "sm_80"
// SM80: gpu.binary @row_sum_kernel_0 [#gpu.object<#nvvm.target<chip = "sm_80"
// CHECK-NOT: gpu.module
// CHECK-NOT: builtin.unrealized_conversion_cast

// MAP-LABEL: func.func @add_relu(
// Results became out-params: the caller allocates the output.
// MAP-SAME: %[[OUT:.*]]: memref<64x128xf32>) {
// MAP-DAG: %[[C1:.*]] = arith.constant 1 : index
// MAP-DAG: %[[C4:.*]] = arith.constant 4 : index
// MAP-DAG: %[[C32:.*]] = arith.constant 32 : index
// MAP-DAG: %[[C8:.*]] = arith.constant 8 : index
// MAP: gpu.launch_func @add_relu_kernel::@add_relu_kernel blocks in (%[[C4]], %[[C8]], %[[C1]]) threads in (%[[C32]], %[[C8]], %[[C1]])
// MAP: gpu.func @add_relu_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 32, 8, 1>, known_grid_size = array<i32: 4, 8, 1>}
// MAP-DAG: %[[BX:.*]] = gpu.block_id x
// MAP-DAG: %[[BY:.*]] = gpu.block_id y
// MAP-DAG: %[[TX:.*]] = gpu.thread_id x
// MAP-DAG: %[[TY:.*]] = gpu.thread_id y
// Element index = thread id + block id * tile size, in both dimensions;
// x indexes the last (contiguous) dimension.
// MAP-DAG: %[[OX:.*]] = affine.apply #{{.*}}()[%[[BX]]]
// MAP-DAG: %[[OY:.*]] = affine.apply #{{.*}}()[%[[BY]]]
// MAP-DAG: %[[COL:.*]] = arith.addi %[[TX]], %[[OX]] : index
// MAP-DAG: %[[ROW:.*]] = arith.addi %[[TY]], %[[OY]] : index
// MAP: memref.store %{{.*}}, %{{.*}}[%[[ROW]], %[[COL]]] : memref<64x128xf32>
// The reduction maps its parallel dimension onto blocks and threads and
// keeps the reduced dimension as a loop inside each thread.
// MAP-LABEL: func.func @row_sum(
// MAP: gpu.func @row_sum_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 32, 1, 1>
// MAP: gpu.func @row_sum_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 32, 1, 1>
// MAP: gpu.thread_id x
// MAP: scf.for

// MERGE: gpu.launch_func @trace_kernels::@add_relu_kernel
// MERGE: gpu.binary @trace_kernels [#gpu.object<#nvvm.target<chip = "sm_90"
// MERGE: gpu.launch_func @trace_kernels::@row_sum_kernel
// MERGE: gpu.launch_func @trace_kernels::@row_sum_kernel_0
// MERGE-NOT: gpu.binary

// TILE: gpu.func @add_relu_kernel({{.*}}) kernel attributes {known_block_size = array<i32: 16, 4, 1>, known_grid_size = array<i32: 8, 16, 1>}

// PTX: gpu.binary @add_relu_kernel [#gpu.object<#nvvm.target<chip = "sm_90", features = "+ptx80">, {{.*}}assembly = "{{.*}}.target sm_90{{.*}}.entry add_relu_kernel

func.func @add_relu(%a: tensor<64x128xf32>, %b: tensor<64x128xf32>) -> tensor<64x128xf32> {
  %e = tensor.empty() : tensor<64x128xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>, affine_map<(i, j) -> (i, j)>],
                       iterator_types = ["parallel", "parallel"]}
      ins(%a, %b : tensor<64x128xf32>, tensor<64x128xf32>) outs(%e : tensor<64x128xf32>) {
  ^bb0(%x: f32, %y: f32, %o: f32):
    %s = arith.addf %x, %y : f32
    %z = arith.constant 0.0 : f32
    %m = arith.maximumf %s, %z : f32
    linalg.yield %m : f32
  } -> tensor<64x128xf32>
  return %r : tensor<64x128xf32>
}

func.func @row_sum(%x: tensor<20x50xf32>) -> tensor<20xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<20xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<20xf32>) -> tensor<20xf32>
  %r = linalg.reduce ins(%x : tensor<20x50xf32>) outs(%f : tensor<20xf32>) dimensions = [1]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<20xf32>
}
