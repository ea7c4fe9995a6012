// RUN: trace-opt %s -split-input-file | FileCheck %s
// RUN: trace-opt %s -split-input-file | trace-opt -split-input-file | FileCheck %s
// RUN: trace-opt %s -split-input-file -mlir-print-op-generic | trace-opt -split-input-file | FileCheck %s

// Every op round-trips through the custom form, the generic form and back.
// Arguments print under their parameter and input names.

// CHECK-LABEL: trace.graph @mlp(
// CHECK-SAME: %fc.weight: tensor<4x3xf32> {trace.param = "fc.weight"}
// CHECK-SAME: %x: tensor<2x3xf32> {trace.donated, trace.input = "x"}
// CHECK-SAME: -> tensor<2x4xf32>
trace.graph @mlp(%w: tensor<4x3xf32> {trace.param = "fc.weight"},
                 %x: tensor<2x3xf32> {trace.input = "x", trace.donated}) -> tensor<2x4xf32> {
  // CHECK-NEXT: %[[C:.*]] = constant dense<1.000000e+00> : tensor<4xf32>
  %c = constant dense<1.0> : tensor<4xf32>
  // CHECK-NEXT: %[[L:.*]] = pyop "linear"(%x, %fc.weight, %[[C]]) : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %0 = pyop "linear"(%x, %w, %c) : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: free %x : tensor<2x3xf32>
  free %x : tensor<2x3xf32>
  // CHECK-NEXT: %[[R:.*]] = pyop "relu"(%[[L]]) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %1 = pyop "relu"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
  // CHECK-NEXT: free %[[L]] : tensor<2x4xf32>
  free %0 : tensor<2x4xf32>
  // CHECK-NEXT: ret %[[R]] : tensor<2x4xf32>
  ret %1 : tensor<2x4xf32>
}

// -----

// Scalars of every kind keep their exact Python form: ints, floats (shortest
// round-trip text, always a float literal), bools, None, strings with escapes,
// nested tuples (a one-element tuple keeps its comma) and lists, and
// non-finite floats in hexadecimal.

// CHECK-LABEL: trace.graph @scalars(
trace.graph @scalars(%x: tensor<2xf32>) -> () {
  // CHECK: pyop "unknown_op"(%arg0, -1, 0, 9223372036854775807, -9223372036854775808) : (tensor<2xf32>) -> ()
  pyop "unknown_op"(%x, -1, 0, 9223372036854775807, -9223372036854775808) : (tensor<2xf32>) -> ()
  // CHECK: pyop "unknown_op"(0.2, %arg0, 1.0e-05, -0.0, 2.0, 0.30000000000000004, 1.0e+300) : (tensor<2xf32>) -> ()
  pyop "unknown_op"(0.2, %x, 1.0e-05, -0.0, 2.0, 0.30000000000000004, 1.0e+300) : (tensor<2xf32>) -> ()
  // CHECK: pyop "unknown_op"(True, False, None, "mean", "tab\09 quote\22 backslash\\") : () -> ()
  pyop "unknown_op"(True, False, None, "mean", "tab\09 quote\22 backslash\\") : () -> ()
  // CHECK: pyop "unknown_op"((), (1,), (1, 2), ((1, 2.5), [None, "s"]), [], {{\[\[}}1], (True,)]) : () -> ()
  pyop "unknown_op"((), (1,), (1, 2), ((1, 2.5), [None, "s"]), [], [[1], (True,)]) : () -> ()
  // CHECK: pyop "unknown_op"(0x7FF0000000000000 : f64, 0xFFF0000000000000 : f64, 0x7FF8000000000000 : f64) : () -> ()
  pyop "unknown_op"(0x7FF0000000000000 : f64, 0xFFF0000000000000 : f64, 0x7FF8000000000000 : f64) : () -> ()
  ret
}

// -----

// Multiple results, extra attributes and an op with no arguments.

// CHECK-LABEL: trace.graph @multi(
trace.graph @multi(%x: tensor<35x20x200xf32>, %h: tensor<2x20x200xf32>, %c: tensor<2x20x200xf32>,
                   %w0: tensor<800x200xf32>, %w1: tensor<800x200xf32>, %w2: tensor<800x200xf32>, %w3: tensor<800x200xf32>)
    -> (tensor<35x20x200xf32>, tensor<2x20x200xf32>) {
  // CHECK: %[[O:.*]]:3 = pyop "lstm"(%{{.*}}, False, 2, 0.0, False, False, False) {note = "kept"} : (
  %o:3 = pyop "lstm"(%x, %h, %c, %w0, %w1, %w2, %w3, False, 2, 0.0, False, False, False) {note = "kept"}
      : (tensor<35x20x200xf32>, tensor<2x20x200xf32>, tensor<2x20x200xf32>, tensor<800x200xf32>, tensor<800x200xf32>, tensor<800x200xf32>, tensor<800x200xf32>)
      -> (tensor<35x20x200xf32>, tensor<2x20x200xf32>, tensor<2x20x200xf32>)
  // CHECK: pyop "seed"() : () -> ()
  pyop "seed"() : () -> ()
  // CHECK: ret %[[O]]#0, %[[O]]#1
  ret %o#0, %o#1 : tensor<35x20x200xf32>, tensor<2x20x200xf32>
}

// -----

// Dynamic and unranked shapes are legal; inference leaves unknown dims open.

// CHECK-LABEL: trace.graph @dynamic(
trace.graph @dynamic(%x: tensor<?x20xf32>, %u: tensor<*xf32>) -> (tensor<?x20xf32>, tensor<*xf32>) {
  // CHECK: pyop "add"(%arg0, 1) : (tensor<?x20xf32>) -> tensor<?x20xf32>
  %0 = pyop "add"(%x, 1) : (tensor<?x20xf32>) -> tensor<?x20xf32>
  // CHECK: pyop "tanh"(%arg1) : (tensor<*xf32>) -> tensor<*xf32>
  %1 = pyop "tanh"(%u) : (tensor<*xf32>) -> tensor<*xf32>
  ret %0, %1 : tensor<?x20xf32>, tensor<*xf32>
}
