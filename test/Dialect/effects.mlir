// RUN: trace-opt %s -split-input-file -canonicalize | FileCheck %s --check-prefix=CANON
// RUN: trace-opt %s -split-input-file -cse | FileCheck %s --check-prefix=CSE

// What MLIR's generic passes may do with pyops, from the registry's effects:
// unused plain ops are removed; random, mutating and unknown ops are kept.
// CANON-LABEL: trace.graph @dead_code
// CANON-NOT: "exp"
// CANON: pyop "dropout"(%arg0, 0.5, True)
// CANON: pyop "add_"(%arg1, 1)
// CANON: pyop "mystery"(%arg0)
// CANON: ret
trace.graph @dead_code(%x: tensor<4xf32>, %y: tensor<4xf32> {trace.donated}) -> () {
  %0 = pyop "exp"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "dropout"(%x, 0.5, True) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyop "add_"(%y, 1) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = pyop "mystery"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  ret
}

// -----

// CSE merges identical reads, but never across a write to the storage (an
// in-place op) or a trace.free, and never random ops.
// CSE-LABEL: trace.graph @cse
// CSE: %[[A:.*]] = pyop "relu"(%arg0)
// CSE-NOT: pyop "relu"(%arg0)
// CSE: pyop "add"(%[[A]], %[[A]])
// CSE: pyop "add_"(%arg0, 1)
// CSE: pyop "relu"(%arg0)
// CSE: pyop "dropout"(%arg0, 0.5, True)
// CSE: pyop "dropout"(%arg0, 0.5, True)
trace.graph @cse(%x: tensor<4xf32> {trace.donated}) -> (tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) {
  %0 = pyop "relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %2 = pyop "add"(%0, %1) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  %3 = pyop "add_"(%x, 1) : (tensor<4xf32>) -> tensor<4xf32>
  %4 = pyop "relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %5 = pyop "dropout"(%x, 0.5, True) : (tensor<4xf32>) -> tensor<4xf32>
  %6 = pyop "dropout"(%x, 0.5, True) : (tensor<4xf32>) -> tensor<4xf32>
  ret %2, %4, %5, %6 : tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>
}

// -----

// A recomputation after a free is not merged into the freed value.
// CSE-LABEL: trace.graph @cse_across_free
// CSE: pyop "relu"(%arg0)
// CSE: free
// CSE: pyop "relu"(%arg0)
trace.graph @cse_across_free(%x: tensor<4xf32>) -> tensor<4xf32> {
  %0 = pyop "relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %1 = pyop "neg"(%0) : (tensor<4xf32>) -> tensor<4xf32>
  free %0 : tensor<4xf32>
  %2 = pyop "relu"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  %3 = pyop "add"(%1, %2) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  ret %3 : tensor<4xf32>
}
