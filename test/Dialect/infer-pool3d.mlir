// RUN: trace-opt %s -split-input-file -verify-diagnostics

// avg_pool3d, max_pool3d_with_indices, _adaptive_avg_pool3d and col2im: the
// registry's inference, which the verifier runs. These calls are valid
// PyTorch and verify; each follows a PyTorch rule.
trace.graph @valid(%x: tensor<2x3x6x7x8xf32>, %u: tensor<3x5x6x7xf64>,
                   %i: tensor<1x2x4x4x4xi64>, %q: tensor<1x2x4x4x4xi8>,
                   %d: tensor<?x3x?x7x8xbf16>, %c: tensor<2x12x20xf32>,
                   %cu: tensor<8x35xf16>, %cb: tensor<1x4x12xi1>,
                   %cd: tensor<?x12x?xf32>) -> () {
  // (6 - 2) / 2 + 1 = 3, (7 - 2) / 2 + 1 = 3, (8 - 2) / 2 + 1 = 4: the
  // stride defaults to the kernel.
  %0 = pyop "avg_pool3d"(%x, [2, 2, 2]) : (tensor<2x3x6x7x8xf32>) -> tensor<2x3x3x3x4xf32>
  // ceil_mode's last-window rule: along H, ceil((7 + 2 - 2) / 2) + 1 = 5,
  // but the fifth window would start at 8 >= 7 + 1 (in the right padding):
  // dropped, 4. Along W, (8 + 2 - 2) / 2 + 1 = 5 divides evenly.
  %1 = pyop "avg_pool3d"(%x, 2, 2, 1, True, False, None) : (tensor<2x3x6x7x8xf32>) -> tensor<2x3x4x4x5xf32>
  // Unbatched, one stride per dim, divisor_override, an i64 input.
  %2 = pyop "avg_pool3d"(%u, [3, 2, 3], [2, 1, 2], [1, 0, 1], False, True, 5) : (tensor<3x5x6x7xf64>) -> tensor<3x3x5x4xf64>
  %3 = pyop "avg_pool3d"(%i, 2) : (tensor<1x2x4x4x4xi64>) -> tensor<1x2x2x2x2xi64>
  // A dynamic dim stays dynamic.
  %4 = pyop "avg_pool3d"(%d, [2, 3, 2]) : (tensor<?x3x?x7x8xbf16>) -> tensor<?x3x?x2x4xbf16>
  // max_pool3d_with_indices: dilation 2 spans 2 * (3 - 1) + 1 = 5 taps;
  // the indices are i64 of the output's shape.
  %5:2 = pyop "max_pool3d_with_indices"(%x, [3, 3, 3], [1, 1, 1], [1, 1, 1], [2, 2, 2], False)
      : (tensor<2x3x6x7x8xf32>) -> (tensor<2x3x4x5x6xf32>, tensor<2x3x4x5x6xi64>)
  // i8, ceil_mode: ceil((4 - 3) / 2) + 1 = 2, the second window starting
  // at 2, inside the input: kept.
  %6:2 = pyop "max_pool3d_with_indices"(%q, 3, 2, 0, 1, True)
      : (tensor<1x2x4x4x4xi8>) -> (tensor<1x2x2x2x2xi8>, tensor<1x2x2x2x2xi64>)
  %7:2 = pyop "max_pool3d_with_indices"(%u, [2, 2, 2], [])
      : (tensor<3x5x6x7xf64>) -> (tensor<3x2x3x3xf64>, tensor<3x2x3x3xi64>)
  // _adaptive_avg_pool3d: the output size replaces the spatial dims; zero
  // is allowed (an empty result), as PyTorch.
  %8 = pyop "_adaptive_avg_pool3d"(%x, [3, 1, 9]) : (tensor<2x3x6x7x8xf32>) -> tensor<2x3x3x1x9xf32>
  %9 = pyop "_adaptive_avg_pool3d"(%u, [0, 2, 2]) : (tensor<3x5x6x7xf64>) -> tensor<3x0x2x2xf64>
  %10 = pyop "_adaptive_avg_pool3d"(%d, 2) : (tensor<?x3x?x7x8xbf16>) -> tensor<?x3x2x2x2xbf16>
  // col2im: 12 = 3 * 2 * 2 channels; (5 - 2) + 1 = 4 by (6 - 2) + 1 = 5
  // blocks = 20.
  %11 = pyop "col2im"(%c, [5, 6], [2, 2], [1, 1], [0, 0], [1, 1]) : (tensor<2x12x20xf32>) -> tensor<2x3x5x6xf32>
  // Unbatched, padded, dilated and strided, int arguments: 8 = 2 * 2 * 2;
  // (7 + 2 - 2 - 1) / 1 + 1 = 7 by (9 + 2 - 1 - 1) / 2 + 1 = 5 blocks = 35.
  %12 = pyop "col2im"(%cu, [7, 9], [2, 2], [2, 1], 1, [1, 2]) : (tensor<8x35xf16>) -> tensor<2x7x9xf16>
  // bool input; dynamic batch and length stay open.
  %13 = pyop "col2im"(%cb, [4, 5], 2, 1, 0, 1) : (tensor<1x4x12xi1>) -> tensor<1x1x4x5xi1>
  %14 = pyop "col2im"(%cd, [5, 6], [2, 2], 1, 0, 1) : (tensor<?x12x?xf32>) -> tensor<?x3x5x6xf32>
  ret
}

// -----

trace.graph @avg_pool3d_padding(%x: tensor<1x1x4x4x4xf32>) -> () {
  // PyTorch: pad should be at most half of the kernel.
  // expected-error @+1 {{"avg_pool3d": padding 2 must be at most half of kernel 3}}
  %0 = pyop "avg_pool3d"(%x, [3, 3, 3], [1, 1, 1], [1, 2, 1]) : (tensor<1x1x4x4x4xf32>) -> tensor<1x1x4x4x4xf32>
  ret
}

// -----

trace.graph @avg_pool3d_pair(%x: tensor<1x1x4x4x4xf32>) -> () {
  // _triple: one int or three.
  // expected-error @+1 {{"avg_pool3d": kernel_size must have 1 or 3 values, got [2, 2]}}
  %0 = pyop "avg_pool3d"(%x, [2, 2]) : (tensor<1x1x4x4x4xf32>) -> tensor<1x1x2x2x2xf32>
  ret
}

// -----

trace.graph @avg_pool3d_divisor(%x: tensor<1x1x4x4x4xf32>) -> () {
  // expected-error @+1 {{"avg_pool3d": divisor must be not zero}}
  %0 = pyop "avg_pool3d"(%x, 2, 2, 0, False, True, 0) : (tensor<1x1x4x4x4xf32>) -> tensor<1x1x2x2x2xf32>
  ret
}

// -----

trace.graph @avg_pool3d_rank(%x: tensor<4x4x4xf32>) -> () {
  // expected-error @+1 {{"avg_pool3d": input must be [N, C, D, H, W] or [C, D, H, W], got [4, 4, 4]}}
  %0 = pyop "avg_pool3d"(%x, 2) : (tensor<4x4x4xf32>) -> tensor<2x2x2xf32>
  ret
}

// -----

trace.graph @avg_pool3d_int32(%x: tensor<1x1x4x4x4xi32>) -> () {
  // PyTorch's kernels take floating dtypes and i64 only.
  // expected-error @+1 {{"avg_pool3d": takes floating-point or i64 tensors, got i32}}
  %0 = pyop "avg_pool3d"(%x, 2) : (tensor<1x1x4x4x4xi32>) -> tensor<1x1x2x2x2xi32>
  ret
}

// -----

trace.graph @avg_pool3d_too_small(%x: tensor<1x1x2x4x4xf32>) -> () {
  // expected-error @+1 {{"avg_pool3d": pooling window [3, 3, 3] (dilation [1, 1, 1]) is larger than the padded input [1, 1, 2, 4, 4]}}
  %0 = pyop "avg_pool3d"(%x, 3) : (tensor<1x1x2x4x4xf32>) -> tensor<1x1x1x1x1xf32>
  ret
}

// -----

trace.graph @max_pool3d_bool(%x: tensor<1x1x4x4x4xi1>) -> () {
  // expected-error @+1 {{"max_pool3d_with_indices": does not take bool tensors}}
  %0:2 = pyop "max_pool3d_with_indices"(%x, 2) : (tensor<1x1x4x4x4xi1>) -> (tensor<1x1x2x2x2xi1>, tensor<1x1x2x2x2xi64>)
  ret
}

// -----

trace.graph @max_pool3d_dilation(%x: tensor<1x1x4x4x4xf32>) -> () {
  // expected-error @+1 {{"max_pool3d_with_indices": kernel_size, stride and dilation must be positive, got [2, 2, 2], [2, 2, 2] and [1, 0, 1]}}
  %0:2 = pyop "max_pool3d_with_indices"(%x, 2, [], 0, [1, 0, 1]) : (tensor<1x1x4x4x4xf32>) -> (tensor<1x1x2x2x2xf32>, tensor<1x1x2x2x2xi64>)
  ret
}

// -----

trace.graph @max_pool3d_indices_dtype(%x: tensor<1x1x4x4x4xf32>) -> () {
  // The indices are i64.
  // expected-error @+1 {{"max_pool3d_with_indices" result #1 is declared 'tensor<1x1x2x2x2xi32>' but the arguments give 'tensor<1x1x2x2x2xi64>'}}
  %0:2 = pyop "max_pool3d_with_indices"(%x, 2) : (tensor<1x1x4x4x4xf32>) -> (tensor<1x1x2x2x2xf32>, tensor<1x1x2x2x2xi32>)
  ret
}

// -----

trace.graph @adaptive_avg_pool3d_negative(%x: tensor<1x1x4x4x4xf32>) -> () {
  // expected-error @+1 {{"_adaptive_avg_pool3d": output_size entries must be non-negative ints or None}}
  %0 = pyop "_adaptive_avg_pool3d"(%x, [2, -1, 2]) : (tensor<1x1x4x4x4xf32>) -> tensor<1x1x2x2x2xf32>
  ret
}

// -----

trace.graph @adaptive_avg_pool3d_pair(%x: tensor<1x1x4x4x4xf32>) -> () {
  // expected-error @+1 {{"_adaptive_avg_pool3d": argument #1 (output_size) must be an int or a triple}}
  %0 = pyop "_adaptive_avg_pool3d"(%x, [2, 2]) : (tensor<1x1x4x4x4xf32>) -> tensor<1x1x2x2x2xf32>
  ret
}

// -----

trace.graph @adaptive_avg_pool3d_int(%x: tensor<1x1x4x4x4xi64>) -> () {
  // expected-error @+1 {{"_adaptive_avg_pool3d": takes floating-point tensors, got i64}}
  %0 = pyop "_adaptive_avg_pool3d"(%x, 2) : (tensor<1x1x4x4x4xi64>) -> tensor<1x1x2x2x2xi64>
  ret
}

// -----

trace.graph @col2im_channels(%x: tensor<1x10x20xf32>) -> () {
  // expected-error @+1 {{"col2im": expected the input's dim 1 (10) to be divisible by the product of kernel_size [2, 2]}}
  %0 = pyop "col2im"(%x, [5, 6], [2, 2], 1, 0, 1) : (tensor<1x10x20xf32>) -> tensor<1x2x5x6xf32>
  ret
}

// -----

trace.graph @col2im_blocks(%x: tensor<1x12x21xf32>) -> () {
  // expected-error @+1 {{"col2im": expected the input's dim 2 to be the number of sliding blocks 4 * 5 = 20, got 21}}
  %0 = pyop "col2im"(%x, [5, 6], [2, 2], 1, 0, 1) : (tensor<1x12x21xf32>) -> tensor<1x3x5x6xf32>
  ret
}

// -----

trace.graph @col2im_no_block(%x: tensor<1x12x20xf32>) -> () {
  // expected-error @+1 {{"col2im": output_size [1, 6] with kernel_size [2, 2], dilation [1, 1], padding [0, 0] and stride [1, 1] leaves no sliding block}}
  %0 = pyop "col2im"(%x, [1, 6], [2, 2], 1, 0, 1) : (tensor<1x12x20xf32>) -> tensor<1x3x1x6xf32>
  ret
}

// -----

trace.graph @col2im_stride(%x: tensor<1x12x20xf32>) -> () {
  // expected-error @+1 {{"col2im": stride should be greater than zero, got [1, 0]}}
  %0 = pyop "col2im"(%x, [5, 6], [2, 2], 1, 0, [1, 0]) : (tensor<1x12x20xf32>) -> tensor<1x3x5x6xf32>
  ret
}

// -----

trace.graph @col2im_list_size(%x: tensor<1x12x20xf32>) -> () {
  // int[2]: an int, or exactly two.
  // expected-error @+1 {{"col2im": output_size must have 2 values, got [5]}}
  %0 = pyop "col2im"(%x, [5], [2, 2], 1, 0, 1) : (tensor<1x12x20xf32>) -> tensor<1x3x5x6xf32>
  ret
}

// -----

trace.graph @col2im_rank(%x: tensor<12xf32>) -> () {
  // expected-error @+1 {{"col2im": expected a 2-D or 3-D (batch mode) input with nonzero non-batch dims, got [12]}}
  %0 = pyop "col2im"(%x, [5, 6], [2, 2], 1, 0, 1) : (tensor<12xf32>) -> tensor<3x5x6xf32>
  ret
}

// -----

trace.graph @col2im_int(%x: tensor<1x12x20xi32>) -> () {
  // expected-error @+1 {{"col2im": takes floating-point or bool tensors, got i32}}
  %0 = pyop "col2im"(%x, [5, 6], [2, 2], 1, 0, 1) : (tensor<1x12x20xi32>) -> tensor<1x3x5x6xi32>
  ret
}
