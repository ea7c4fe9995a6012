// An lstm through the whole GPU pipeline: the time loop stays on the host
// (a branch back to the loop header) and launches the step's kernels (the
// zero fill and the recurrent matmul, and the cell) from inside it; every
// kernel is compiled for sm_90.
// RUN: trace-opt %s --trace-lower-to-gpu="chip=sm_90" | FileCheck %s
//
// The same module after outlining: the loop is an scf.for around the three
// launches with no memref.copy inside (the cell writes h_t straight into
// the output and reads the gates' slice in place); it frees the step's
// hidden projection. The initial states are copied once, before it, on the
// device: the loop must not write into the caller's h0 and c0.
// RUN: trace-opt %s --trace-lower-to-gpu="chip=sm_90" --mlir-print-ir-after=gpu-kernel-outlining -o /dev/null 2>&1 | FileCheck %s --check-prefix=LOOP

// CHECK-LABEL: llvm.func @lstm(
// CHECK: llvm.br ^[[HEAD:bb[0-9]+]]
// CHECK: ^[[HEAD]](%{{.*}}: i64):
// CHECK: llvm.cond_br %{{.*}}, ^[[BODY:bb[0-9]+]], ^[[EXIT:bb[0-9]+]]
// CHECK: ^[[BODY]]:
// CHECK: gpu.launch_func @{{.*}}::@lstm_kernel
// CHECK: gpu.launch_func @{{.*}}::@lstm_kernel
// CHECK: gpu.launch_func @{{.*}}::@lstm_kernel
// CHECK-NOT: gpu.launch_func
// CHECK: llvm.br ^[[HEAD]]
// CHECK: ^[[EXIT]]:
// CHECK: gpu.binary @lstm_kernel {{\[}}#gpu.object<#nvvm.target<chip = "sm_90"
// CHECK-NOT: gpu.module
// CHECK-NOT: builtin.unrealized_conversion_cast

// LOOP-LABEL: func.func @lstm(
// LOOP-SAME: %[[H0:[^:]*]]: memref<1x2x4xf32> {trace.input = "h0"}
// LOOP: %[[H0ROW:.*]] = memref.subview %[[H0]][0, 0, 0]
// LOOP: %[[H:.*]] = memref.alloc() {{.*}} : memref<2x4xf32>
// LOOP: gpu.launch_func {{.*}} args({{.*}}%[[H0ROW]] : {{.*}}, %[[H]] : memref<2x4xf32>)
// LOOP: scf.for
// LOOP-NOT: memref.copy
// LOOP: gpu.launch_func
// LOOP-NOT: memref.copy
// LOOP: gpu.launch_func {{.*}}%[[H]]
// LOOP-NOT: memref.copy
// LOOP: gpu.launch_func
// LOOP-NEXT: memref.dealloc
// LOOP-NEXT: }
trace.graph @lstm(%x: tensor<7x2x3xf32> {trace.input = "x"}, %h0: tensor<1x2x4xf32> {trace.input = "h0"}, %c0: tensor<1x2x4xf32> {trace.input = "c0"}, %w: tensor<16x3xf32> {trace.param = "w_ih"}, %u: tensor<16x4xf32> {trace.param = "w_hh"}, %b: tensor<16xf32> {trace.param = "b_ih"}, %d: tensor<16xf32> {trace.param = "b_hh"}) -> (tensor<7x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) {
  %0:3 = pyop "lstm"(%x, %h0, %c0, %w, %u, %b, %d, True, 1, 0.0, False, False, False) : (tensor<7x2x3xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>, tensor<16x3xf32>, tensor<16x4xf32>, tensor<16xf32>, tensor<16xf32>) -> (tensor<7x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  ret %0#0, %0#1, %0#2 : tensor<7x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>
}
