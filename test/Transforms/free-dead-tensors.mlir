// RUN: trace-opt %s -split-input-file -free-dead-tensors | FileCheck %s
// Idempotence: a second run changes nothing, in one pipeline or after a
// print/parse round trip.
// RUN: trace-opt %s -split-input-file -free-dead-tensors -free-dead-tensors | FileCheck %s
// RUN: trace-opt %s -split-input-file -free-dead-tensors > %t.once
// RUN: trace-opt %t.once -split-input-file -free-dead-tensors > %t.twice
// RUN: diff %t.once %t.twice

// Straight line: each intermediate is freed right after its last use; the
// non-donated input and the returned value are kept.
// CHECK-LABEL: trace.graph @straight_line
// CHECK-NEXT: %[[A:.*]] = pyop "relu"(%x)
// CHECK-NEXT: %[[B:.*]] = pyop "neg"(%[[A]])
// CHECK-NEXT: free %[[A]]
// CHECK-NEXT: %[[C:.*]] = pyop "add"(%[[B]], %[[B]])
// CHECK-NEXT: free %[[B]]
// CHECK-NEXT: ret %[[C]]
trace.graph @straight_line(%x: tensor<4xf32> {trace.input = "x"}) -> tensor<4xf32> {
  %0 = pyop "relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyop "add"(%1, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  ret %2 : tensor<4xf32>
}

// -----

// A value nobody uses is freed right after its definition; a donated input
// nobody uses is freed at the start of the graph.
// CHECK-LABEL: trace.graph @unused
// CHECK-NEXT: free %d
// CHECK-NEXT: %[[A:.*]] = pyop "exp"(%x)
// CHECK-NEXT: free %[[A]]
// CHECK-NEXT: %[[B:.*]] = pyop "tanh"(%x)
// CHECK-NEXT: ret %[[B]]
trace.graph @unused(%x: tensor<4xf32> {trace.input = "x"},
                    %d: tensor<4xf32> {trace.input = "d", trace.donated}) -> tensor<4xf32> {
  %0 = pyop "exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "tanh"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  ret %1 : tensor<4xf32>
}

// -----

// Multiple results are separate storages, each freed on its own; h_n is
// returned so it is kept.
// CHECK-LABEL: trace.graph @multiple_results
// CHECK: %[[O:.*]]:3 = pyop "lstm"
// CHECK-NEXT: free %[[O]]#2
// CHECK-NEXT: %[[Y:.*]] = pyop "relu"(%[[O]]#0)
// CHECK-NEXT: free %[[O]]#0
// CHECK-NEXT: ret %[[Y]], %[[O]]#1
trace.graph @multiple_results(%x: tensor<5x2x3xf32>, %h: tensor<1x2x3xf32>, %c: tensor<1x2x3xf32>,
                              %w0: tensor<12x3xf32> {trace.param = "w_ih"}, %w1: tensor<12x3xf32> {trace.param = "w_hh"})
    -> (tensor<5x2x3xf32>, tensor<1x2x3xf32>) {
  %o:3 = pyop "lstm"(%x, %h, %c, %w0, %w1, False, 1, 0.0, False, False, False)
      : (tensor<5x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>, tensor<12x3xf32>, tensor<12x3xf32>)
      -> (tensor<5x2x3xf32>, tensor<1x2x3xf32>, tensor<1x2x3xf32>)
  %y = pyop "relu"(%o#0) : (tensor<5x2x3xf32>) -> tensor<5x2x3xf32>
  ret %y, %o#1 : tensor<5x2x3xf32>, tensor<1x2x3xf32>
}

// -----

// Views of views share their base's storage: the base lives until the last
// use of any view, and only the base is freed.
// CHECK-LABEL: trace.graph @views_of_views
// CHECK-NEXT: %[[A:.*]] = pyop "relu"(%arg0)
// CHECK-NEXT: %[[V:.*]] = pyop "view"(%[[A]], (3, 2))
// CHECK-NEXT: %[[T:.*]] = pyop "t"(%[[V]])
// CHECK-NEXT: %[[S:.*]] = pyop "select"(%[[T]], 0, 1)
// CHECK-NEXT: %[[B:.*]] = pyop "neg"(%[[S]])
// CHECK-NEXT: free %[[A]]
// CHECK-NEXT: ret %[[B]]
trace.graph @views_of_views(%x: tensor<6xf32>) -> tensor<3xf32> {
  %0 = pyop "relu"(%x) : (tensor<6xf32>) -> tensor<6xf32>
  %1 = pyop "view"(%0, (3, 2)) : (tensor<6xf32>) -> tensor<3x2xf32>
  %2 = pyop "t"(%1) : (tensor<3x2xf32>) -> tensor<2x3xf32>
  %3 = pyop "select"(%2, 0, 1) : (tensor<2x3xf32>) -> tensor<3xf32>
  %4 = pyop "neg"(%3) : (tensor<3xf32>) -> tensor<3xf32>
  ret %4 : tensor<3xf32>
}

// -----

// Returning a view keeps its base alive: nothing is freed.
// CHECK-LABEL: trace.graph @returned_view
// CHECK-NOT: free
// CHECK: ret
trace.graph @returned_view(%x: tensor<6xf32>) -> tensor<2x3xf32> {
  %0 = pyop "relu"(%x) : (tensor<6xf32>) -> tensor<6xf32>
  %1 = pyop "view"(%0, (2, 3)) : (tensor<6xf32>) -> tensor<2x3xf32>
  ret %1 : tensor<2x3xf32>
}

// -----

// Tuple Index: the importer resolves a tuple element statically to its own
// argument (see test/Import), so each element of a donated tuple is freed on
// its own; Index on a tensor is a `select` view.
// CHECK-LABEL: trace.graph @tuple_index
// CHECK-NEXT: %[[S:.*]] = pyop "select"(%hidden.0, 0, 1)
// CHECK-NEXT: %[[A:.*]] = pyop "add"(%[[S]], %hidden.1)
// CHECK-NEXT: free %hidden.0
// CHECK-NEXT: free %hidden.1
// CHECK-NEXT: ret %[[A]]
trace.graph @tuple_index(%h0: tensor<2x3xf32> {trace.input = "hidden.0", trace.donated},
                         %h1: tensor<3xf32> {trace.input = "hidden.1", trace.donated}) -> tensor<3xf32> {
  %0 = pyop "select"(%h0, 0, 1) : (tensor<2x3xf32>) -> tensor<3xf32>
  %1 = pyop "add"(%0, %h1) : (tensor<3xf32>, tensor<3xf32>) -> tensor<3xf32>
  ret %1 : tensor<3xf32>
}

// -----

// An in-place op's result is its operand and its write is a use: the storage
// is freed after the last use of either name.
// CHECK-LABEL: trace.graph @in_place
// CHECK-NEXT: %[[A:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: %[[B:.*]] = pyop "add_"(%[[A]], 1)
// CHECK-NEXT: %[[C:.*]] = pyop "mul"(%[[B]], %[[A]])
// CHECK-NEXT: free %[[A]]
// CHECK-NEXT: ret %[[C]]
trace.graph @in_place(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyop "exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "add_"(%0, 1) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyop "mul"(%1, %0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  ret %2 : tensor<4xf32>
}

// -----

// In-place on a view writes the base: the base lives past the write.
// CHECK-LABEL: trace.graph @in_place_view
// CHECK-NEXT: %[[A:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: %[[V:.*]] = pyop "select"(%[[A]], 0, 0)
// CHECK-NEXT: %[[S:.*]] = pyop "sum"(%[[A]])
// CHECK-NEXT: %[[W:.*]] = pyop "zero_"(%[[V]])
// CHECK-NEXT: free %[[A]]
// CHECK-NEXT: ret %[[S]]
trace.graph @in_place_view(%x: tensor<2x2xf32>) -> tensor<f32> {
  %0 = pyop "exp"(%x) : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %1 = pyop "select"(%0, 0, 0) : (tensor<2x2xf32>) -> tensor<2xf32>
  %2 = pyop "sum"(%0) : (tensor<2x2xf32>) -> tensor<f32>
  %3 = pyop "zero_"(%1) : (tensor<2xf32>) -> tensor<2xf32>
  ret %2 : tensor<f32>
}

// -----

// Params, constants and non-donated inputs are never freed; a donated input
// is freed after its last use.
// CHECK-LABEL: trace.graph @ownership
// CHECK-NEXT: %[[C:.*]] = constant
// CHECK-NEXT: %[[A:.*]] = pyop "linear"(%x, %fc.weight, %[[C]])
// CHECK-NEXT: %[[B:.*]] = pyop "add"(%[[A]], %d)
// CHECK-NEXT: free %d
// CHECK-NEXT: free %[[A]]
// CHECK-NEXT: ret %[[B]]
trace.graph @ownership(%w: tensor<4x3xf32> {trace.param = "fc.weight"},
                       %x: tensor<2x3xf32> {trace.input = "x"},
                       %d: tensor<2x4xf32> {trace.input = "d", trace.donated}) -> tensor<2x4xf32> {
  %c = constant dense<0.5> : tensor<4xf32>
  %0 = pyop "linear"(%x, %w, %c) : (tensor<2x3xf32>, tensor<4x3xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %1 = pyop "add"(%0, %d) : (tensor<2x4xf32>, tensor<2x4xf32>) -> tensor<2x4xf32>
  ret %1 : tensor<2x4xf32>
}

// -----

// A returned donated input is kept (the unused relu result is freed).
// CHECK-LABEL: trace.graph @returned_donated
// CHECK-NEXT: %[[A:.*]] = pyop "relu"(%d)
// CHECK-NEXT: free %[[A]]
// CHECK-NEXT: ret %d
trace.graph @returned_donated(%d: tensor<4xf32> {trace.input = "d", trace.donated}) -> tensor<4xf32> {
  %0 = pyop "relu"(%d) : (tensor<4xf32>) -> tensor<4xf32>
  ret %d : tensor<4xf32>
}

// -----

// Dropout in eval mode returns its input (a view); in training mode it
// allocates.
// CHECK-LABEL: trace.graph @dropout_modes
// CHECK-NEXT: %[[A:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: %[[E:.*]] = pyop "dropout"(%[[A]], 0.5, False)
// CHECK-NEXT: %[[T:.*]] = pyop "dropout"(%[[E]], 0.5, True)
// CHECK-NEXT: free %[[A]]
// CHECK-NEXT: ret %[[T]]
trace.graph @dropout_modes(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyop "exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "dropout"(%0, 0.5, False) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyop "dropout"(%1, 0.5, True) : (tensor<4xf32>) -> tensor<4xf32>
  ret %2 : tensor<4xf32>
}

// -----

// An unknown op's result may alias its operands: the operands stay alive
// until the result is dead, and the result itself is never freed.
// CHECK-LABEL: trace.graph @unknown_op
// CHECK-NEXT: %[[A:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: %[[U:.*]] = pyop "mystery"(%[[A]])
// CHECK-NEXT: %[[B:.*]] = pyop "neg"(%[[U]])
// CHECK-NEXT: %[[C:.*]] = pyop "neg"(%[[B]])
// CHECK-NEXT: free %[[B]]
// CHECK-NEXT: free %[[C]]
// CHECK-NEXT: %[[D:.*]] = pyop "tanh"(%[[U]])
// CHECK-NEXT: free %[[A]]
// CHECK-NEXT: ret %[[D]]
trace.graph @unknown_op(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyop "exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "mystery"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyop "neg"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = pyop "neg"(%2) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = pyop "tanh"(%1) : (tensor<4xf32>) -> tensor<4xf32>
  ret %4 : tensor<4xf32>
}

// -----

// An unknown op on a parameter: nothing reachable from it is freed.
// CHECK-LABEL: trace.graph @unknown_on_param
// CHECK-NOT: free
// CHECK: ret
trace.graph @unknown_on_param(%w: tensor<4xf32> {trace.param = "w"}) -> tensor<4xf32> {
  %0 = pyop "mystery"(%w) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  ret %1 : tensor<4xf32>
}

// -----

// Several storages dying at one op are freed there in definition order.
// CHECK-LABEL: trace.graph @same_point
// CHECK: %[[S:.*]] = pyop "cat"(%[[A:.*]], %[[B:.*]], %[[C:.*]], 0)
// CHECK-NEXT: free %[[A]]
// CHECK-NEXT: free %[[B]]
// CHECK-NEXT: free %[[C]]
trace.graph @same_point(%x: tensor<2xf32>) -> tensor<6xf32> {
  %a = pyop "exp"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %b = pyop "log"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %c = pyop "neg"(%x) : (tensor<2xf32>) -> tensor<2xf32>
  %s = pyop "cat"(%a, %b, %c, 0) : (tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<6xf32>
  ret %s : tensor<6xf32>
}

// -----

// Existing frees are respected: an already freed storage gets no second
// free, and the free is not counted as a use.
// CHECK-LABEL: trace.graph @already_freed
// CHECK-NEXT: %[[A:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: %[[B:.*]] = pyop "neg"(%[[A]])
// CHECK-NEXT: free %[[A]]
// CHECK-NEXT: ret %[[B]]
trace.graph @already_freed(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyop "exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  free %0 : tensor<4xf32>
  ret %1 : tensor<4xf32>
}

// -----

// contiguous and reshape are a view or a copy tied to their operand, and
// dropout with p = 0 returns its input: all share the storage.
// CHECK-LABEL: trace.graph @view_or_identity
// CHECK-NEXT: %[[A:.*]] = pyop "exp"(%arg0)
// CHECK-NEXT: %[[C:.*]] = pyop "contiguous"(%[[A]])
// CHECK-NEXT: %[[D:.*]] = pyop "dropout"(%[[C]], 0.0, True)
// CHECK-NEXT: %[[R:.*]] = pyop "reshape"(%[[D]], (2, 2))
// CHECK-NEXT: %[[S:.*]] = pyop "sum"(%[[R]])
// CHECK-NEXT: free %[[A]]
// CHECK-NEXT: ret %[[S]]
trace.graph @view_or_identity(%x: tensor<4xf32>) -> tensor<f32> {
  %0 = pyop "exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "contiguous"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyop "dropout"(%1, 0.0, True) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = pyop "reshape"(%2, (2, 2)) : (tensor<4xf32>) -> tensor<2x2xf32>
  %4 = pyop "sum"(%3) : (tensor<2x2xf32>) -> tensor<f32>
  ret %4 : tensor<f32>
}

// -----

// A chain of unknown ops: each operand lives until the chain's results are
// dead; a maybe-view that is returned keeps its operand.
// CHECK-LABEL: trace.graph @unknown_chain
// CHECK: %[[N:.*]] = pyop "neg"
// CHECK-NEXT: free %[[A:.*]] : tensor<4xf32>
// CHECK-NOT: free
// CHECK: ret
trace.graph @unknown_chain(%x: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %a = pyop "exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %b = pyop "exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %u1 = pyop "mystery"(%a) : (tensor<4xf32>) -> tensor<4xf32>
  %u2 = pyop "mystery"(%u1) : (tensor<4xf32>) -> tensor<4xf32>
  %n = pyop "neg"(%u2) : (tensor<4xf32>) -> tensor<4xf32>
  %u3 = pyop "mystery"(%b) : (tensor<4xf32>) -> tensor<4xf32>
  ret %n, %u3 : tensor<4xf32>, tensor<4xf32>
}
