// RUN: trace-opt %s -split-input-file -verify-diagnostics

// avg_pool2d_backward, _adaptive_avg_pool2d_backward,
// native_layer_norm_backward, native_group_norm_backward and
// embedding_dense_backward: the registry's inference, which the verifier
// runs. These calls are valid PyTorch and verify; each follows a PyTorch
// rule.
trace.graph @valid(%g: tensor<2x3x4x4xf32>, %x: tensor<2x3x8x8xf32>,
                   %gc: tensor<1x2x4x5xf64>, %xc: tensor<1x2x7x9xf64>,
                   %gi: tensor<3x4x4xi64>, %xi: tensor<3x7x7xi64>,
                   %ga: tensor<2x3x3x2xf32>,
                   %lg: tensor<4x6x8xf32>, %lm: tensor<4x6x1xf32>,
                   %lw: tensor<8xf32>, %lb: tensor<8xf32>, %lw2: tensor<6x8xbf16>,
                   %lg2: tensor<4x6x8xbf16>, %lm2: tensor<4x1x1xbf16>,
                   %ng: tensor<2x6x5xf32>, %nm: tensor<2x3xf32>, %nw: tensor<6xf32>,
                   %eg: tensor<3x4x16xf32>, %ei: tensor<3x4xi32>,
                   %egi: tensor<5x2xi64>, %eii: tensor<5xi64>,
                   %dg: tensor<?x3x4x4xf32>, %dx: tensor<?x3x8x8xf32>) -> () {
  // The gradient of the input: self's type; grad_output is the pooled shape.
  %0 = pyop "avg_pool2d_backward"(%g, %x, [2, 2], [2, 2], [0, 0], False, True, None)
      : (tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  // ceil_mode adds a window: (7 + 2 - 3 + 1) / 2 + 1 = 4 rows, 5 columns.
  %1 = pyop "avg_pool2d_backward"(%gc, %xc, [3, 3], [2, 2], [1, 1], True, False, 3)
      : (tensor<1x2x4x5xf64>, tensor<1x2x7x9xf64>) -> tensor<1x2x7x9xf64>
  // i64 and unbatched: each gradient divides toward zero at run time.
  %2 = pyop "avg_pool2d_backward"(%gi, %xi, [3, 3], [2, 2], [1, 1], False, True, None)
      : (tensor<3x4x4xi64>, tensor<3x7x7xi64>) -> tensor<3x7x7xi64>
  // A dynamic batch stays open.
  %3 = pyop "avg_pool2d_backward"(%dg, %dx, [2, 2], [], [0, 0], False, True, None)
      : (tensor<?x3x4x4xf32>, tensor<?x3x8x8xf32>) -> tensor<?x3x8x8xf32>
  // Any output size for the adaptive pool, larger than the input too.
  %4 = pyop "_adaptive_avg_pool2d_backward"(%ga, %x)
      : (tensor<2x3x3x2xf32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  // Layer norm: the input's, then the weight's and the bias's shapes.
  %5:3 = pyop "native_layer_norm_backward"(%lg, %lg, [8], %lm, %lm, %lw, %lb, [True, True, True])
      : (tensor<4x6x8xf32>, tensor<4x6x8xf32>, tensor<4x6x1xf32>, tensor<4x6x1xf32>,
         tensor<8xf32>, tensor<8xf32>) -> (tensor<4x6x8xf32>, tensor<8xf32>, tensor<8xf32>)
  // A result output_mask leaves out is an empty [0] tensor; no bias needed.
  %6:3 = pyop "native_layer_norm_backward"(%lg2, %lg2, [6, 8], %lm2, %lm2, %lw2, None, [False, True, False])
      : (tensor<4x6x8xbf16>, tensor<4x6x8xbf16>, tensor<4x1x1xbf16>, tensor<4x1x1xbf16>,
         tensor<6x8xbf16>) -> (tensor<0xbf16>, tensor<6x8xbf16>, tensor<0xbf16>)
  // Group norm: [C] gradients, of the input's dtype without a weight.
  %7:3 = pyop "native_group_norm_backward"(%ng, %ng, %nm, %nm, %nw, 2, 6, 5, 3, [True, True, True])
      : (tensor<2x6x5xf32>, tensor<2x6x5xf32>, tensor<2x3xf32>, tensor<2x3xf32>,
         tensor<6xf32>) -> (tensor<2x6x5xf32>, tensor<6xf32>, tensor<6xf32>)
  %8:3 = pyop "native_group_norm_backward"(%ng, %ng, %nm, %nm, None, 2, 6, 5, 3, [True, False, True])
      : (tensor<2x6x5xf32>, tensor<2x6x5xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
      -> (tensor<2x6x5xf32>, tensor<0xf32>, tensor<6xf32>)
  // Embedding: [num_weights, D]; i32 indices; integer gradients too.
  %9 = pyop "embedding_dense_backward"(%eg, %ei, 10, -1, False)
      : (tensor<3x4x16xf32>, tensor<3x4xi32>) -> tensor<10x16xf32>
  %10 = pyop "embedding_dense_backward"(%egi, %eii, 3, 0, True)
      : (tensor<5x2xi64>, tensor<5xi64>) -> tensor<3x2xi64>
  ret
}

// -----

trace.graph @avg_pool_shape(%g: tensor<2x3x3x4xf32>, %x: tensor<2x3x8x8xf32>) -> () {
  // expected-error @+1 {{"avg_pool2d_backward": grad_output must have the pooled shape [2, 3, 4, 4], got [2, 3, 3, 4]}}
  %0 = pyop "avg_pool2d_backward"(%g, %x, [2, 2], [2, 2], [0, 0], False, True, None)
      : (tensor<2x3x3x4xf32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  ret
}

// -----

trace.graph @avg_pool_divisor(%g: tensor<2x3x4x4xf32>, %x: tensor<2x3x8x8xf32>) -> () {
  // expected-error @+1 {{"avg_pool2d_backward": divisor must be not zero}}
  %0 = pyop "avg_pool2d_backward"(%g, %x, [2, 2], [2, 2], [0, 0], False, True, 0)
      : (tensor<2x3x4x4xf32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  ret
}

// -----

trace.graph @avg_pool_dtype(%g: tensor<2x3x4x4xi32>, %x: tensor<2x3x8x8xi32>) -> () {
  // expected-error @+1 {{"avg_pool2d_backward": grad_output and self must have one floating or i64 dtype, got i32 and i32}}
  %0 = pyop "avg_pool2d_backward"(%g, %x, [2, 2], [2, 2], [0, 0], False, True, None)
      : (tensor<2x3x4x4xi32>, tensor<2x3x8x8xi32>) -> tensor<2x3x8x8xi32>
  ret
}

// -----

trace.graph @adaptive_rank(%g: tensor<3x4x4xf32>, %x: tensor<2x3x8x8xf32>) -> () {
  // expected-error @+1 {{"_adaptive_avg_pool2d_backward": grad_output [3, 4, 4] must have the leading dims of self [2, 3, 8, 8]}}
  %0 = pyop "_adaptive_avg_pool2d_backward"(%g, %x)
      : (tensor<3x4x4xf32>, tensor<2x3x8x8xf32>) -> tensor<2x3x8x8xf32>
  ret
}

// -----

trace.graph @layer_norm_bias_none(%g: tensor<4x8xf32>, %m: tensor<4x1xf32>, %w: tensor<8xf32>) -> () {
  // expected-error @+1 {{"native_layer_norm_backward": output_mask asks for the gradient of a bias that is None}}
  %0:3 = pyop "native_layer_norm_backward"(%g, %g, [8], %m, %m, %w, None, [True, True, True])
      : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>, tensor<8xf32>)
      -> (tensor<4x8xf32>, tensor<8xf32>, tensor<8xf32>)
  ret
}

// -----

trace.graph @layer_norm_stats(%g: tensor<4x8xf32>, %m: tensor<3x1xf32>) -> () {
  // expected-error @+1 {{"native_layer_norm_backward": mean [3, 1] must hold 4 elements, one per normalized row}}
  %0:3 = pyop "native_layer_norm_backward"(%g, %g, [8], %m, %m, None, None, [True, False, False])
      : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<3x1xf32>, tensor<3x1xf32>)
      -> (tensor<4x8xf32>, tensor<0xf32>, tensor<0xf32>)
  ret
}

// -----

trace.graph @layer_norm_mask(%g: tensor<4x8xf32>, %m: tensor<4x1xf32>) -> () {
  // expected-error @+1 {{"native_layer_norm_backward": output_mask must be three bools, got [1, 0]}}
  %0:3 = pyop "native_layer_norm_backward"(%g, %g, [8], %m, %m, None, None, [True, False])
      : (tensor<4x8xf32>, tensor<4x8xf32>, tensor<4x1xf32>, tensor<4x1xf32>)
      -> (tensor<4x8xf32>, tensor<0xf32>, tensor<0xf32>)
  ret
}

// -----

trace.graph @group_norm_groups(%g: tensor<2x6x5xf32>, %m: tensor<2x3xf32>) -> () {
  // expected-error @+1 {{"native_group_norm_backward": Expected number of channels in input to be divisible by num_groups, but got C=6 and num_groups=4}}
  %0:3 = pyop "native_group_norm_backward"(%g, %g, %m, %m, None, 2, 6, 5, 4, [True, False, False])
      : (tensor<2x6x5xf32>, tensor<2x6x5xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
      -> (tensor<2x6x5xf32>, tensor<0xf32>, tensor<0xf32>)
  ret
}

// -----

trace.graph @group_norm_input(%g: tensor<2x6x5xf32>, %m: tensor<2x3xf32>) -> () {
  // expected-error @+1 {{"native_group_norm_backward": input [2, 6, 5] is not [N=2, C=6, *] with HxW=4 elements in *}}
  %0:3 = pyop "native_group_norm_backward"(%g, %g, %m, %m, None, 2, 6, 4, 3, [True, False, False])
      : (tensor<2x6x5xf32>, tensor<2x6x5xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
      -> (tensor<2x6x5xf32>, tensor<0xf32>, tensor<0xf32>)
  ret
}

// -----

trace.graph @embedding_grad_shape(%g: tensor<3x16xf32>, %i: tensor<3x4xi64>) -> () {
  // expected-error @+1 {{"embedding_dense_backward": grad_output [3, 16] must be indices.shape [3, 4] + [D]}}
  %0 = pyop "embedding_dense_backward"(%g, %i, 10, -1, False)
      : (tensor<3x16xf32>, tensor<3x4xi64>) -> tensor<10x16xf32>
  ret
}

// -----

trace.graph @embedding_indices(%g: tensor<3x16xf32>, %i: tensor<3xf32>) -> () {
  // expected-error @+1 {{"embedding_dense_backward": indices must be integers, got f32}}
  %0 = pyop "embedding_dense_backward"(%g, %i, 10, -1, False)
      : (tensor<3x16xf32>, tensor<3xf32>) -> tensor<10x16xf32>
  ret
}

// -----

trace.graph @embedding_num_weights(%g: tensor<3x16xf32>, %i: tensor<3xi64>) -> () {
  // expected-error @+1 {{"embedding_dense_backward": num_weights must be non-negative, got -1}}
  %0 = pyop "embedding_dense_backward"(%g, %i, -1, -1, False)
      : (tensor<3x16xf32>, tensor<3xi64>) -> tensor<10x16xf32>
  ret
}
