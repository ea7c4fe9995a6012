// RUN: trace-opt %s -split-input-file -verify-diagnostics

// diagonal, as_strided and convolution: the registry's inference, which the
// verifier runs. These calls are valid PyTorch and verify; each follows a
// PyTorch rule.
trace.graph @valid(%x: tensor<3x4x5xf32>, %m: tensor<?x6xf32>, %s: tensor<12xf64>,
                   %c1: tensor<2x4x9xf32>, %w1: tensor<6x2x3xf32>, %b: tensor<6xf32>,
                   %c3: tensor<1x4x5x4x3xbf16>, %w3: tensor<4x3x2x3x1xbf16>,
                   %cd: tensor<?x4x?xf32>, %wt: tensor<4x3x3xf32>) -> () {
  // The two dims become the last one; a negative offset starts below.
  %0 = pyop "diagonal"(%x, -1, 2, 0) : (tensor<3x4x5xf32>) -> tensor<4x3xf32>
  %1 = pyop "diagonal"(%x) : (tensor<3x4x5xf32>) -> tensor<5x3xf32>
  // An offset past the matrix gives an empty diagonal, not an error.
  %2 = pyop "diagonal"(%x, 100, 0, 1) : (tensor<3x4x5xf32>) -> tensor<5x0xf32>
  // A dynamic dim leaves the diagonal's length open.
  %3 = pyop "diagonal"(%m, 1) : (tensor<?x6xf32>) -> tensor<?xf32>
  // as_strided's shape is its size; the view may span more than self
  // (self may be a view of a larger storage), which the runtime checks.
  %4 = pyop "as_strided"(%s, [2, 3], [3, 1], None) : (tensor<12xf64>) -> tensor<2x3xf64>
  %5 = pyop "as_strided"(%s, [], [], 11) : (tensor<12xf64>) -> tensor<f64>
  %6 = pyop "as_strided"(%s, [4, 4], [0, 1], 0) : (tensor<12xf64>) -> tensor<4x4xf64>
  // 1-D, grouped, strided and padded: (9 + 2 - 2 - 1) / 2 + 1 = 5.
  %7 = pyop "convolution"(%c1, %w1, %b, [2], [1], [1], False, [0], 2)
      : (tensor<2x4x9xf32>, tensor<6x2x3xf32>, tensor<6xf32>) -> tensor<2x6x5xf32>
  // Transposed: (9 - 1) * 2 - 2 + 2 + 1 + 1 = 18 outputs, O = 3 * groups.
  %8 = pyop "convolution"(%c1, %wt, None, [2], [1], [1], True, [1], 2)
      : (tensor<2x4x9xf32>, tensor<4x3x3xf32>) -> tensor<2x6x18xf32>
  // 3-D transposed in bf16, one-element lists for every dim.
  %9 = pyop "convolution"(%c3, %w3, None, [2], [0], [1], True, [1], 1)
      : (tensor<1x4x5x4x3xbf16>, tensor<4x3x2x3x1xbf16>) -> tensor<1x3x11x10x6xbf16>
  // Dynamic batch and length stay open.
  %10 = pyop "convolution"(%cd, %w1, None, [1], [0], [1], False, [0], 2)
      : (tensor<?x4x?xf32>, tensor<6x2x3xf32>) -> tensor<?x6x?xf32>
  ret
}

// -----

trace.graph @diagonal_same_dims(%x: tensor<3x4xf32>) -> () {
  // expected-error @+1 {{"diagonal": diagonal dimensions cannot be identical 0, -2}}
  %0 = pyop "diagonal"(%x, 0, 0, -2) : (tensor<3x4xf32>) -> tensor<3xf32>
  ret
}

// -----

trace.graph @diagonal_dim_range(%x: tensor<3x4xf32>) -> () {
  // expected-error @+1 {{"diagonal": dim2 2 is out of range for a tensor of rank 2}}
  %0 = pyop "diagonal"(%x, 0, 0, 2) : (tensor<3x4xf32>) -> tensor<3xf32>
  ret
}

// -----

trace.graph @diagonal_rank1(%x: tensor<3xf32>) -> () {
  // expected-error @+1 {{"diagonal": diagonal needs at least 2 dims, got a tensor of rank 1}}
  %0 = pyop "diagonal"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  ret
}

// -----

trace.graph @as_strided_negative_stride(%x: tensor<12xf32>) -> () {
  // expected-error @+1 {{"as_strided": negative strides are not supported, got stride [-1, 1]}}
  %0 = pyop "as_strided"(%x, [2, 2], [-1, 1], 3) : (tensor<12xf32>) -> tensor<2x2xf32>
  ret
}

// -----

trace.graph @as_strided_lengths(%x: tensor<12xf32>) -> () {
  // expected-error @+1 {{"as_strided": mismatch in length of strides and shape: size [2, 2] and stride [1]}}
  %0 = pyop "as_strided"(%x, [2, 2], [1], 0) : (tensor<12xf32>) -> tensor<2x2xf32>
  ret
}

// -----

trace.graph @as_strided_offset(%x: tensor<12xf32>) -> () {
  // expected-error @+1 {{"as_strided": invalid storage offset -2}}
  %0 = pyop "as_strided"(%x, [2], [1], -2) : (tensor<12xf32>) -> tensor<2xf32>
  ret
}

// -----

trace.graph @conv_transposed_overflow(%x: tensor<1x4x3xf32>, %w: tensor<4x3x2xf32>) -> () {
  // A stride of 2^62 must not wrap into a plausible size.
  // expected-error @+1 {{"convolution": the transposed convolution of input [1, 4, 3] by weight [4, 3, 2] with stride [4611686018427387904]}}
  %0 = pyop "convolution"(%x, %w, None, [4611686018427387904], [0], [1], True, [0], 1)
      : (tensor<1x4x3xf32>, tensor<4x3x2xf32>) -> tensor<1x3x4xf32>
  ret
}

// -----

trace.graph @conv_output_padding(%x: tensor<1x4x3xf32>, %w: tensor<4x3x2xf32>) -> () {
  // expected-error @+1 {{"convolution": output padding must be smaller than either stride or dilation, got output_padding [1], stride [1] and dilation [1]}}
  %0 = pyop "convolution"(%x, %w, None, [1], [0], [1], True, [1], 1)
      : (tensor<1x4x3xf32>, tensor<4x3x2xf32>) -> tensor<1x3x5xf32>
  ret
}

// -----

trace.graph @conv_channels(%x: tensor<1x4x6xf32>, %w: tensor<6x3x3xf32>) -> () {
  // expected-error @+1 {{"convolution": input [1, 4, 6] has 4 channels but weight [6, 3, 3] with groups=2 expects 6}}
  %0 = pyop "convolution"(%x, %w, None, [1], [0], [1], False, [0], 2)
      : (tensor<1x4x6xf32>, tensor<6x3x3xf32>) -> tensor<1x6x4xf32>
  ret
}

// -----

trace.graph @conv_dtypes(%x: tensor<1x4x6xf32>, %w: tensor<6x4x3xf64>) -> () {
  // expected-error @+1 {{"convolution": input, weight and bias must have one dtype, got f32 and f64}}
  %0 = pyop "convolution"(%x, %w, None, [1], [0], [1], False, [0], 1)
      : (tensor<1x4x6xf32>, tensor<6x4x3xf64>) -> tensor<1x6x4xf32>
  ret
}

// -----

trace.graph @conv_integer(%x: tensor<1x4x6xi32>, %w: tensor<6x4x3xi32>) -> () {
  // expected-error @+1 {{"convolution": convolution supports floating-point dtypes and int64, got i32}}
  %0 = pyop "convolution"(%x, %w, None, [1], [0], [1], False, [0], 1)
      : (tensor<1x4x6xi32>, tensor<6x4x3xi32>) -> tensor<1x6x4xi32>
  ret
}
