// The CPU twin: linalg on tensors to LLVM with C interface wrappers.
// RUN: trace-opt %S/Inputs/linalg-funcs.mlir --trace-lower-to-cpu | FileCheck %s
//
// Every func is LLVM now, results are trailing out-params (one more
// descriptor pointer in the C interface than there are inputs), and each
// func has the _mlir_ciface_ wrapper ExecutionEngine and trace-twin-run
// call. Softmax's row max/sum temporaries are freed (buffer deallocation).

// CHECK-LABEL: llvm.func @add_relu(
// CHECK-LABEL: llvm.func @_mlir_ciface_add_relu(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: llvm.func @_mlir_ciface_linear(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: llvm.func @_mlir_ciface_row_sum(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-LABEL: llvm.func @softmax(
// CHECK: llvm.call @malloc
// CHECK: llvm.intr.exp
// CHECK: llvm.call @free
// CHECK-LABEL: llvm.func @_mlir_ciface_softmax(%{{.*}}: !llvm.ptr, %{{.*}}: !llvm.ptr) attributes {llvm.emit_c_interface}
// CHECK-NOT: func.func
// CHECK-NOT: memref.
// CHECK-NOT: builtin.unrealized_conversion_cast
