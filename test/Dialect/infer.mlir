// RUN: trace-opt %s -split-input-file -verify-diagnostics

// The verifier runs the registry's shape and dtype inference. These calls
// are valid PyTorch and verify; each follows a PyTorch rule.
trace.graph @valid(%f: tensor<4xf32>, %d0: tensor<f64>, %b: tensor<4xi1>, %i: tensor<4xi32>,
                   %x: tensor<3x4xf32>, %m: tensor<?x5xf32>, %n: tensor<5x4xf32>, %w: tensor<?xf32>,
                   %e: tensor<1x3x1xf32>, %h: tensor<2x2x?xf32>, %xs: tensor<5x2x3xf32>,
                   %wi: tensor<?x3xf32>, %img: tensor<2x3x4x4xf32>, %p: tensor<2x3x4x4xf32>, %t: tensor<2x4x4xi64>) -> () {
  // A 0-d tensor does not widen a dimensioned tensor of the same category.
  %0 = pyop "mul"(%f, %d0) : (tensor<4xf32>, tensor<f64>) -> tensor<4xf32>
  // A Python int lifts bool to i64; a Python float lifts ints to f32.
  %1 = pyop "add"(%b, 1) : (tensor<4xi1>) -> tensor<4xi64>
  %2 = pyop "mul"(%i, 0.5) : (tensor<4xi32>) -> tensor<4xf32>
  // where's condition takes no part in the dtype.
  %3 = pyop "where"(%b, 1, 0) : (tensor<4xi1>) -> tensor<4xi64>
  // sum widens integers to i64; true division gives floats.
  %4 = pyop "sum"(%i) : (tensor<4xi32>) -> tensor<i64>
  %5 = pyop "div"(%i, %i) : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xf32>
  // Dynamic dims stay open.
  %6 = pyop "addmm"(%x, %m, %n) : (tensor<3x4xf32>, tensor<?x5xf32>, tensor<5x4xf32>) -> tensor<?x4xf32>
  %7 = pyop "layer_norm"(%x, (4,), %w, None, 1.0e-05) : (tensor<3x4xf32>, tensor<?xf32>) -> tensor<3x4xf32>
  // squeeze(()) squeezes nothing; squeeze() every size-1 dim.
  %8 = pyop "squeeze"(%e, ()) : (tensor<1x3x1xf32>) -> tensor<1x3x1xf32>
  %9 = pyop "squeeze"(%e) : (tensor<1x3x1xf32>) -> tensor<3xf32>
  // A bidirectional LSTM with an unknown hidden size.
  %10:3 = pyop "lstm"(%xs, %h, %h, %wi, %wi, %wi, %wi, False, 1, 0.0, False, True, False)
      : (tensor<5x2x3xf32>, tensor<2x2x?xf32>, tensor<2x2x?xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>)
      -> (tensor<5x2x?xf32>, tensor<2x2x?xf32>, tensor<2x2x?xf32>)
  // A bidirectional GRU with an unknown hidden size: no c0, two results.
  %13:2 = pyop "gru"(%xs, %h, %wi, %wi, %wi, %wi, False, 1, 0.0, False, True, False)
      : (tensor<5x2x3xf32>, tensor<2x2x?xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>, tensor<?x3xf32>)
      -> (tensor<5x2x?xf32>, tensor<2x2x?xf32>)
  // cross_entropy with class indices over an image, and with probabilities.
  %11 = pyop "cross_entropy"(%img, %t, None, 0) : (tensor<2x3x4x4xf32>, tensor<2x4x4xi64>) -> tensor<2x4x4xf32>
  %12 = pyop "cross_entropy"(%img, %p) : (tensor<2x3x4x4xf32>, tensor<2x3x4x4xf32>) -> tensor<f32>
  ret
}

// -----

trace.graph @stride_zero(%x: tensor<1x1x4x4xf32>) -> () {
  // expected-error @+1 {{"max_pool2d": kernel_size, stride and dilation must be positive, got [2, 2], [0, 0] and [1, 1]}}
  %0 = pyop "max_pool2d"(%x, 2, 0) : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  ret
}

// -----

trace.graph @conv_stride_zero(%x: tensor<1x1x4x4xf32>, %w: tensor<1x1x2x2xf32>) -> () {
  // expected-error @+1 {{"conv2d": stride and dilation must be positive}}
  %0 = pyop "conv2d"(%x, %w, None, 0) : (tensor<1x1x4x4xf32>, tensor<1x1x2x2xf32>) -> tensor<1x1x3x3xf32>
  ret
}

// -----

trace.graph @pool_too_large(%x: tensor<1x1x2x2xf32>) -> () {
  // expected-error @+1 {{"max_pool2d": pooling window [3, 3] (dilation [1, 1]) is larger than the padded input [1, 1, 2, 2]}}
  %0 = pyop "max_pool2d"(%x, 3, 2) : (tensor<1x1x2x2xf32>) -> tensor<1x1x1x1xf32>
  ret
}

// -----

trace.graph @conv_too_large(%x: tensor<1x2x6x6xf32>, %w: tensor<3x2x4x4xf32>) -> () {
  // expected-error @+1 {{"conv2d": kernel [3, 2, 4, 4] (dilation [2, 2]) is larger than the padded input [1, 2, 6, 6]}}
  %0 = pyop "conv2d"(%x, %w, None, 2, 0, 2, 1) : (tensor<1x2x6x6xf32>, tensor<3x2x4x4xf32>) -> tensor<1x3x1x1xf32>
  ret
}

// -----

trace.graph @conv_groups(%x: tensor<1x4x6x6xf32>, %w: tensor<3x2x3x3xf32>) -> () {
  // expected-error @+1 {{"conv2d": weight [3, 2, 3, 3] has 3 output channels, not divisible by groups=2}}
  %0 = pyop "conv2d"(%x, %w, None, 1, 0, 1, 2) : (tensor<1x4x6x6xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x4x4xf32>
  ret
}

// -----

trace.graph @index_elements(%x: tensor<4xindex>, %y: tensor<4xi32>) -> () {
  // expected-error @+1 {{"add": argument #0 has element type index, which has no PyTorch dtype}}
  %0 = pyop "add"(%x, %y) : (tensor<4xindex>, tensor<4xi32>) -> tensor<4xi32>
  ret
}

// -----

trace.graph @slice_0d(%x: tensor<f32>) -> () {
  // expected-error @+1 {{"slice": slice() cannot be applied to a 0-dim tensor}}
  %0 = pyop "slice"(%x, 0, 0, 1, 1) : (tensor<f32>) -> tensor<f32>
  ret
}

// -----

trace.graph @narrow_negative(%x: tensor<?xf32>) -> () {
  // expected-error @+1 {{"narrow": narrow() length must be non-negative, got -3}}
  %0 = pyop "narrow"(%x, 0, 0, -3) : (tensor<?xf32>) -> tensor<3xf32>
  ret
}

// -----

trace.graph @expand_negative(%x: tensor<1xf32>) -> () {
  // expected-error @+1 {{"expand": invalid size -2 in [-2]; only -1 (keep the dim) may be negative}}
  %0 = pyop "expand"(%x, (-2,)) : (tensor<1xf32>) -> tensor<2xf32>
  ret
}

// -----

trace.graph @view_overflow(%x: tensor<8xf32>) -> () {
  // expected-error @+1 {{"view": shape [3, 6148914691236517205, -1] has more than 2^63 elements}}
  %0 = pyop "view"(%x, (3, 6148914691236517205, -1)) : (tensor<8xf32>) -> tensor<8xf32>
  ret
}

// -----

trace.graph @bmm_broadcast(%x: tensor<1x2x3xf32>, %y: tensor<4x3x5xf32>) -> () {
  // expected-error @+1 {{"bmm": batch sizes differ: [1, 2, 3] and [4, 3, 5]}}
  %0 = pyop "bmm"(%x, %y) : (tensor<1x2x3xf32>, tensor<4x3x5xf32>) -> tensor<4x2x5xf32>
  ret
}

// -----

trace.graph @sum_duplicate_dims(%x: tensor<2x3xf32>) -> () {
  // expected-error @+1 {{"sum": dim 0 appears more than once in the list of dims}}
  %0 = pyop "sum"(%x, (0, -2)) : (tensor<2x3xf32>) -> tensor<3xf32>
  ret
}

// -----

trace.graph @reductions(%b: tensor<2x3xi1>, %u: tensor<2x3xui8>, %i: tensor<2x3xi32>) -> () {
  // prod widens bools and narrow ints to i64, as sum; prod.default takes no dim.
  %0 = pyop "prod"(%b, 1) : (tensor<2x3xi1>) -> tensor<2xi64>
  %1 = pyop "prod"(%i) : (tensor<2x3xi32>) -> tensor<i64>
  // any gives bool but keeps uint8; any.dims with () reduces nothing.
  %2 = pyop "any"(%u, 0) : (tensor<2x3xui8>) -> tensor<3xui8>
  %3 = pyop "any"(%i, ()) : (tensor<2x3xi32>) -> tensor<2x3xi1>
  %4 = pyop "any"(%i, None, True) : (tensor<2x3xi32>) -> tensor<1x1xi1>
  // amin keeps the dtype; () reduces everything, as amax.
  %5 = pyop "amin"(%i, ()) : (tensor<2x3xi32>) -> tensor<i32>
  // argmax gives i64 positions; dim=None with keepdim keeps every dim as 1.
  %6 = pyop "argmax"(%i, None, True) : (tensor<2x3xi32>) -> tensor<1x1xi64>
  %7 = pyop "argmin"(%u, -1) : (tensor<2x3xui8>) -> tensor<2xi64>
  // cumsum keeps the shape; bools and ints sum to i64 unless dtype= says.
  %8 = pyop "cumsum"(%b, 0) : (tensor<2x3xi1>) -> tensor<2x3xi64>
  %9 = pyop "cumsum"(%i, 1, "torch.int32") : (tensor<2x3xi32>) -> tensor<2x3xi32>
  ret
}

// -----

trace.graph @var(%x: tensor<2x3xf32>) -> () {
  // var.correction: keepdim is argument 3, after the keyword correction.
  %0 = pyop "var"(%x, 1, 0, True) : (tensor<2x3xf32>) -> tensor<2x1xf32>
  %1 = pyop "var"(%x) : (tensor<2x3xf32>) -> tensor<f32>
  ret
}

// -----

trace.graph @prod_dim_list(%x: tensor<2x3xf32>) -> () {
  // expected-error @+1 {{"prod": argument #1 (dim) must be an int}}
  %0 = pyop "prod"(%x, (0, 1)) : (tensor<2x3xf32>) -> tensor<f32>
  ret
}

// -----

trace.graph @argmax_bool(%b: tensor<2x3xi1>) -> () {
  // expected-error @+1 {{"argmax": does not support bool input}}
  %0 = pyop "argmax"(%b, 1) : (tensor<2x3xi1>) -> tensor<2xi64>
  ret
}

// -----

trace.graph @amin_empty_group(%x: tensor<0x3xf32>) -> () {
  // expected-error @+1 {{"amin": reduction dim 0 has size 0, and a reduction without an identity needs at least one element}}
  %0 = pyop "amin"(%x, 0) : (tensor<0x3xf32>) -> tensor<3xf32>
  ret
}

// -----

trace.graph @where_condition(%c: tensor<4xf32>, %x: tensor<4xf32>) -> () {
  // expected-error @+1 {{"where": condition must be a bool tensor, got f32}}
  %0 = pyop "where"(%c, %x, 0.0) : (tensor<4xf32>, tensor<4xf32>) -> tensor<4xf32>
  ret
}

// -----

trace.graph @lstm_layer1_weight(%x: tensor<6x3x5xf32>, %h: tensor<2x3x4xf32>, %w0: tensor<16x5xf32>, %u: tensor<16x4xf32>, %w1: tensor<16x7xf32>) -> () {
  // expected-error @+1 {{"lstm": w_ih of layer 1 must be [16, 4], got [16, 7]}}
  %o:3 = pyop "lstm"(%x, %h, %h, %w0, %u, %w1, %u, False, 2, 0.0, False, False, False)
      : (tensor<6x3x5xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>, tensor<16x5xf32>, tensor<16x4xf32>, tensor<16x7xf32>, tensor<16x4xf32>)
      -> (tensor<6x3x4xf32>, tensor<2x3x4xf32>, tensor<2x3x4xf32>)
  ret
}

// -----

trace.graph @gru_gates(%x: tensor<6x3x5xf32>, %h: tensor<1x3x4xf32>, %w0: tensor<16x5xf32>, %u: tensor<16x4xf32>) -> () {
  // A GRU has 3 gates: lstm's [4H, in] weights do not fit.
  // expected-error @+1 {{"gru": w_ih of layer 0 must be [12, 5], got [16, 5]}}
  %o:2 = pyop "gru"(%x, %h, %w0, %u, False, 1, 0.0, False, False, False)
      : (tensor<6x3x5xf32>, tensor<1x3x4xf32>, tensor<16x5xf32>, tensor<16x4xf32>)
      -> (tensor<6x3x4xf32>, tensor<1x3x4xf32>)
  ret
}

// -----

trace.graph @gru_weight_count(%x: tensor<6x3x5xf32>, %h: tensor<1x3x4xf32>, %w0: tensor<12x5xf32>, %u: tensor<12x4xf32>) -> () {
  // expected-error @+1 {{"gru": expects 4 weight tensors for num_layers=1, got 2}}
  %o:2 = pyop "gru"(%x, %h, %w0, %u, True, 1, 0.0, False, False, False)
      : (tensor<6x3x5xf32>, tensor<1x3x4xf32>, tensor<12x5xf32>, tensor<12x4xf32>)
      -> (tensor<6x3x4xf32>, tensor<1x3x4xf32>)
  ret
}

// -----

trace.graph @lstm_dropout(%x: tensor<6x3x5xf32>, %h: tensor<1x3x4xf32>, %w0: tensor<16x5xf32>, %u: tensor<16x4xf32>) -> () {
  // expected-error @+1 {{"lstm": dropout must be in [0, 1], got 1.5}}
  %o:3 = pyop "lstm"(%x, %h, %h, %w0, %u, False, 1, 1.5, True, False, False)
      : (tensor<6x3x5xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>, tensor<16x5xf32>, tensor<16x4xf32>)
      -> (tensor<6x3x4xf32>, tensor<1x3x4xf32>, tensor<1x3x4xf32>)
  ret
}

// -----

trace.graph @lstm_dtype(%x: tensor<6x3x5xf64>, %h: tensor<1x3x4xf64>, %w0: tensor<16x5xf32>, %u: tensor<16x4xf32>) -> () {
  // expected-error @+1 {{"lstm": w_ih of layer 0 is f32 but the input is f64}}
  %o:3 = pyop "lstm"(%x, %h, %h, %w0, %u, False, 1, 0.0, False, False, False)
      : (tensor<6x3x5xf64>, tensor<1x3x4xf64>, tensor<1x3x4xf64>, tensor<16x5xf32>, tensor<16x4xf32>)
      -> (tensor<6x3x4xf64>, tensor<1x3x4xf64>, tensor<1x3x4xf64>)
  ret
}

// -----

trace.graph @batch_norm_one_stat(%x: tensor<4x3xf32>, %rv: tensor<3xf32>) -> () {
  // expected-error @+1 {{"batch_norm": running_mean and running_var must either both be None or neither be None}}
  %0 = pyop "batch_norm"(%x, None, None, None, %rv, True, 0.1, 1.0e-05) : (tensor<4x3xf32>, tensor<3xf32>) -> tensor<4x3xf32>
  ret
}

// -----

trace.graph @loss_weight(%x: tensor<4x3xf32>, %t: tensor<4xi64>, %w: tensor<5xf32>) -> () {
  // expected-error @+1 {{"nll_loss": weight must have shape [3] (one per class), got [5]}}
  %0 = pyop "nll_loss"(%x, %t, %w) : (tensor<4x3xf32>, tensor<4xi64>, tensor<5xf32>) -> tensor<f32>
  ret
}

// -----

trace.graph @unflatten_sizes(%x: tensor<2x6x4xf32>) -> () {
  // expected-error @+1 {{"unflatten": unflatten: Provided sizes [4, 2] don't multiply up to the size of dim 1 (6) in the input tensor}}
  %0 = pyop "unflatten"(%x, 1, [4, 2]) : (tensor<2x6x4xf32>) -> tensor<2x4x2x4xf32>
  ret
}

// -----

trace.graph @unflatten_dim(%x: tensor<2x6x4xf32>) -> () {
  // expected-error @+1 {{"unflatten": Dimension out of range (expected to be in range of [-3, 2], but got 3)}}
  %0 = pyop "unflatten"(%x, 3, [2, 2]) : (tensor<2x6x4xf32>) -> tensor<2x6x2x2xf32>
  ret
}

// -----

trace.graph @unflatten_two_inferred(%x: tensor<2x6x4xf32>) -> () {
  // expected-error @+1 {{"unflatten": unflatten: only one dimension can be inferred, got [-1, -1]}}
  %0 = pyop "unflatten"(%x, 1, [-1, -1]) : (tensor<2x6x4xf32>) -> tensor<2x6x1x4xf32>
  ret
}

// -----

// A valid unflatten: -1 is inferred, dynamic dims stay open.
trace.graph @unflatten_valid(%x: tensor<2x6x4xf32>, %d: tensor<?x6xf32>) -> () {
  %0 = pyop "unflatten"(%x, -2, [-1, 3]) : (tensor<2x6x4xf32>) -> tensor<2x2x3x4xf32>
  %1 = pyop "unflatten"(%d, 0, [2, -1]) : (tensor<?x6xf32>) -> tensor<2x?x6xf32>
  ret
}

// -----

trace.graph @sdpa_embedding(%q: tensor<2x3x4xf32>, %k: tensor<2x5x3xf32>, %v: tensor<2x5x4xf32>) -> () {
  // expected-error @+1 {{"scaled_dot_product_attention": query [2, 3, 4] and key [2, 5, 3] must have the same embedding size (last dim)}}
  %0 = pyop "scaled_dot_product_attention"(%q, %k, %v) : (tensor<2x3x4xf32>, tensor<2x5x3xf32>, tensor<2x5x4xf32>) -> tensor<2x3x4xf32>
  ret
}

// -----

trace.graph @sdpa_sequence(%q: tensor<2x3x4xf32>, %k: tensor<2x5x4xf32>, %v: tensor<2x6x4xf32>) -> () {
  // expected-error @+1 {{"scaled_dot_product_attention": key [2, 5, 4] and value [2, 6, 4] must have the same sequence length (dim -2)}}
  %0 = pyop "scaled_dot_product_attention"(%q, %k, %v) : (tensor<2x3x4xf32>, tensor<2x5x4xf32>, tensor<2x6x4xf32>) -> tensor<2x3x4xf32>
  ret
}

// -----

trace.graph @sdpa_rank(%q: tensor<4xf32>, %k: tensor<5x4xf32>) -> () {
  // expected-error @+1 {{"scaled_dot_product_attention": query, key and value must have rank >= 2, got [4], [5, 4] and [5, 4]}}
  %0 = pyop "scaled_dot_product_attention"(%q, %k, %k) : (tensor<4xf32>, tensor<5x4xf32>, tensor<5x4xf32>) -> tensor<4xf32>
  ret
}

// -----

trace.graph @sdpa_mask_dtype(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %m: tensor<3x5xi64>) -> () {
  // expected-error @+1 {{"scaled_dot_product_attention": attn_mask must be bool or have the query's dtype f32, got i64}}
  %0 = pyop "scaled_dot_product_attention"(%q, %k, %k, %m) : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>, tensor<3x5xi64>) -> tensor<3x4xf32>
  ret
}

// -----

trace.graph @sdpa_mask_shape(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %m: tensor<2x3x5xi1>) -> () {
  // expected-error @+1 {{"scaled_dot_product_attention": attn_mask [2, 3, 5] does not broadcast to the attention scores [3, 5]}}
  %0 = pyop "scaled_dot_product_attention"(%q, %k, %k, %m) : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>, tensor<2x3x5xi1>) -> tensor<3x4xf32>
  ret
}

// -----

trace.graph @sdpa_mask_causal(%q: tensor<3x4xf32>, %k: tensor<5x4xf32>, %m: tensor<3x5xi1>) -> () {
  // expected-error @+1 {{"scaled_dot_product_attention": an explicit attn_mask must not be set when is_causal=True}}
  %0 = pyop "scaled_dot_product_attention"(%q, %k, %k, %m, 0.0, True) : (tensor<3x4xf32>, tensor<5x4xf32>, tensor<5x4xf32>, tensor<3x5xi1>) -> tensor<3x4xf32>
  ret
}

// -----

// Valid: batch dims broadcast, Ev != E, a broadcast float mask.
trace.graph @sdpa_valid(%q: tensor<1x3x4x8xf32>, %k: tensor<2x1x6x8xf32>, %v: tensor<3x6x5xf32>, %m: tensor<6xf32>) -> () {
  %0 = pyop "scaled_dot_product_attention"(%q, %k, %v, %m, 0.0, False, 0.5) : (tensor<1x3x4x8xf32>, tensor<2x1x6x8xf32>, tensor<3x6x5xf32>, tensor<6xf32>) -> tensor<2x3x4x5xf32>
  ret
}

// -----

// Hostile scalars: shape inference reports an overflow instead of handing
// out a wrapped shape (a fuzzer found each of these).

// view's -1 over an input whose element count the old code took from
// getNumElements(), which wraps.
trace.graph @view_zero_overflow(%x: tensor<0xf32>) -> () {
  // expected-error @+1 {{"view": result #0 of shape [0, 4611686018427387904, 4] holds no elements, but its other dims multiply to 2^64, which overflows int64}}
  %0 = pyop "view"(%x, (0, 4611686018427387904, 4)) : (tensor<0xf32>) -> tensor<?x?x?xf32>
  ret
}

// -----

// start + length used to wrap to a small number and pass the bounds check.
trace.graph @narrow_overflow(%x: tensor<2x9xf32>) -> () {
  // expected-error @+1 {{"narrow": narrow(1, 2, 9223372036854775807) is out of range for dim of size 9}}
  %0 = pyop "narrow"(%x, 1, 2, 9223372036854775807) : (tensor<2x9xf32>) -> tensor<2x?xf32>
  ret
}

// -----

trace.graph @narrow_start_overflow(%x: tensor<2x9xf32>) -> () {
  // expected-error @+1 {{"narrow": narrow(1, -9223372036854775808, 1) is out of range for dim of size 9}}
  %0 = pyop "narrow"(%x, 1, -9223372036854775808, 1) : (tensor<2x9xf32>) -> tensor<2x1xf32>
  ret
}

// -----

trace.graph @conv2d_padding_overflow(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3x3xf32>) -> () {
  // expected-error @+1 {{"conv2d": kernel [1, 1, 3, 3] with padding [4611686018427387904, 0] and dilation [1, 1] overflows int64 on input [1, 1, 5, 5]}}
  %0 = pyop "conv2d"(%x, %w, None, [1, 1], [4611686018427387904, 0], [1, 1], 1) : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<?x?x?x?xf32>
  ret
}

// -----

trace.graph @conv2d_dilation_overflow(%x: tensor<1x1x5x5xf32>, %w: tensor<1x1x3x3xf32>) -> () {
  // expected-error @+1 {{"conv2d": kernel [1, 1, 3, 3] with padding [0, 0] and dilation [1, 4611686018427387904] overflows int64 on input [1, 1, 5, 5]}}
  %0 = pyop "conv2d"(%x, %w, None, [1, 1], [0, 0], [1, 4611686018427387904], 1) : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<?x?x?x?xf32>
  ret
}

// -----

// weight channels times groups used to wrap to the input's channel count.
trace.graph @conv2d_groups_overflow(%x: tensor<1x0x5x5xf32>, %w: tensor<0x2x3x3xf32>) -> () {
  // expected-error @+1 {{"conv2d": input channels 2 * 4611686018427387904 overflows int64}}
  %0 = pyop "conv2d"(%x, %w, None, 1, 0, 1, 4611686018427387904) : (tensor<1x0x5x5xf32>, tensor<0x2x3x3xf32>) -> tensor<?x?x?x?xf32>
  ret
}

// -----

// 2 * padding <= kernel wrapped for a padding of 2^62.
trace.graph @max_pool2d_padding_overflow(%x: tensor<1x1x5x5xf32>) -> () {
  // expected-error @+1 {{"max_pool2d": padding 4611686018427387904 must be at most half of kernel 3}}
  %0 = pyop "max_pool2d"(%x, [3, 3], [1, 1], [4611686018427387904, 0], [1, 1], False) : (tensor<1x1x5x5xf32>) -> tensor<?x?x?x?xf32>
  ret
}

// -----

trace.graph @max_pool2d_dilation_overflow(%x: tensor<1x1x5x5xf32>) -> () {
  // expected-error @+1 {{"max_pool2d": pooling window [3, 3] with padding [0, 0] and dilation [4611686018427387904, 1] overflows int64 on input [1, 1, 5, 5]}}
  %0 = pyop "max_pool2d"(%x, [3, 3], [1, 1], [0, 0], [4611686018427387904, 1], True) : (tensor<1x1x5x5xf32>) -> tensor<?x?x?x?xf32>
  ret
}

// -----

// num_layers * 4 weights used to wrap to the number given.
trace.graph @lstm_layers_overflow(%x: tensor<5x2x3xf32>, %h: tensor<1x2x4xf32>, %w: tensor<16x3xf32>) -> () {
  // expected-error @+1 {{"lstm": num_layers=4611686018427387904 needs more than 2^63 weight tensors, got 0}}
  %0:3 = pyop "lstm"(%x, %h, %h, True, 4611686018427387904, 0.0, False, False, False) : (tensor<5x2x3xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>) -> (tensor<5x2x4xf32>, tensor<1x2x4xf32>, tensor<1x2x4xf32>)
  ret
}

// -----

// expand and the other ops whose result sizes come from scalars: the
// result is over the size limit.
trace.graph @expand_over_limit(%x: tensor<1x1xf32>) -> () {
  // expected-error @+1 {{"expand": result #0 of shape [4294967296, 4294967296] holds 2^64 elements of 4 bytes, over TraceIR's limit of 2^48 bytes (281474976710656)}}
  %0 = pyop "expand"(%x, [4294967296, 4294967296]) : (tensor<1x1xf32>) -> tensor<?x?xf32>
  ret
}

// -----

trace.graph @cat_overflow(%x: tensor<0x4611686018427387904xi1>) -> () {
  // expected-error @+1 {{"cat": concatenated size 4611686018427387904 + 4611686018427387904 overflows int64}}
  %0 = pyop "cat"(%x, %x, 1) : (tensor<0x4611686018427387904xi1>, tensor<0x4611686018427387904xi1>) -> tensor<0x?xi1>
  ret
}

// -----

// PyTorch has no bool kernel for the rounding ops, nor a float one for
// bitwise_not, nor an integer one for leaky_relu and elu.
trace.graph @rounding_bool(%b: tensor<4xi1>) -> () {
  // expected-error @+1 {{"ceil": takes no bool tensor (PyTorch has no bool kernel for it)}}
  %0 = pyop "ceil"(%b) : (tensor<4xi1>) -> tensor<4xi1>
  ret
}

// -----

trace.graph @bitwise_not_float(%x: tensor<4xf32>) -> () {
  // expected-error @+1 {{"bitwise_not": takes integer or bool tensors, got f32}}
  %0 = pyop "bitwise_not"(%x) : (tensor<4xf32>) -> tensor<4xf32>
  ret
}

// -----

trace.graph @leaky_relu_int(%i: tensor<4xi64>) -> () {
  // expected-error @+1 {{"leaky_relu": takes floating-point tensors, got i64}}
  %0 = pyop "leaky_relu"(%i, 0.1) : (tensor<4xi64>) -> tensor<4xi64>
  ret
}

// -----

// The binary ops and clamp: bitwise ops take integers and bools, fmod and
// remainder refuse bools, logical ops give bools, atan2 gives floats, and
// clamp promotes with the bounds it is given (an int tensor clamped to 0.5
// is f32; None takes no part).
trace.graph @binary_ops(%i: tensor<4xi32>, %l: tensor<4xi64>, %b: tensor<4xi1>, %f: tensor<3x4xf32>) -> () {
  %0 = pyop "bitwise_and"(%i, %l) : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xi64>
  %1 = pyop "bitwise_xor"(%b, 1) : (tensor<4xi1>) -> tensor<4xi64>
  %2 = pyop "logical_or"(%f, %i) : (tensor<3x4xf32>, tensor<4xi32>) -> tensor<3x4xi1>
  %3 = pyop "atan2"(%i, %l) : (tensor<4xi32>, tensor<4xi64>) -> tensor<4xf32>
  %4 = pyop "remainder"(%i, 2.5) : (tensor<4xi32>) -> tensor<4xf32>
  %5 = pyop "maximum"(%b, %b) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  %6 = pyop "clamp"(%i, 0.5) : (tensor<4xi32>) -> tensor<4xf32>
  %7 = pyop "clamp"(%i, None, 3) : (tensor<4xi32>) -> tensor<4xi32>
  %8 = pyop "clamp"(%f, %l, None) : (tensor<3x4xf32>, tensor<4xi64>) -> tensor<3x4xf32>
  %9 = pyop "copy"(%f, %i) : (tensor<3x4xf32>, tensor<4xi32>) -> tensor<3x4xf32>
  ret
}

// -----

trace.graph @clamp_without_bounds(%f: tensor<4xf32>) -> () {
  // expected-error @+1 {{"clamp": at least one of 'min' or 'max' must not be None}}
  %0 = pyop "clamp"(%f, None, None) : (tensor<4xf32>) -> tensor<4xf32>
  ret
}

// -----

trace.graph @fmod_bool(%b: tensor<4xi1>) -> () {
  // expected-error @+1 {{"fmod": takes no bool tensor (PyTorch has no bool kernel for it)}}
  %0 = pyop "fmod"(%b, %b) : (tensor<4xi1>, tensor<4xi1>) -> tensor<4xi1>
  ret
}

// -----

trace.graph @copy_no_broadcast(%f: tensor<4xf32>, %g: tensor<2x4xf32>) -> () {
  // expected-error @+1 {{"copy": src of shape [2, 4] does not broadcast to self's [4]}}
  %0 = pyop "copy"(%f, %g) : (tensor<4xf32>, tensor<2x4xf32>) -> tensor<4xf32>
  ret
}

// -----

// The indexing ops: gathers take the index's shape (index_select: one dim
// of it), advanced indexing puts the broadcast index shape where the
// indexed dims were (adjacent) or first (apart), scatters keep self's type.
trace.graph @indexing(%x: tensor<3x4x5xf32>, %i: tensor<2xi64>, %j: tensor<2x1xi32>,
                      %g: tensor<3x2x5xi64>, %s: tensor<3x4x5xf32>, %v: tensor<2x5xf32>,
                      %z: tensor<f32>, %k: tensor<i64>, %r: tensor<3x5xi64>) -> () {
  %0 = pyop "index_select"(%x, 1, %i) : (tensor<3x4x5xf32>, tensor<2xi64>) -> tensor<3x2x5xf32>
  %1 = pyop "index_select"(%z, 0, %k) : (tensor<f32>, tensor<i64>) -> tensor<f32>
  %2 = pyop "gather"(%x, -2, %g) : (tensor<3x4x5xf32>, tensor<3x2x5xi64>) -> tensor<3x2x5xf32>
  %3 = pyop "scatter"(%x, 1, %g, %s) : (tensor<3x4x5xf32>, tensor<3x2x5xi64>, tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %4 = pyop "scatter"(%x, 1, %g, 2.5) : (tensor<3x4x5xf32>, tensor<3x2x5xi64>) -> tensor<3x4x5xf32>
  %5 = pyop "scatter_add"(%x, 1, %g, %s) : (tensor<3x4x5xf32>, tensor<3x2x5xi64>, tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  %6 = pyop "scatter_reduce"(%x, 1, %g, %s, "amax", False) : (tensor<3x4x5xf32>, tensor<3x2x5xi64>, tensor<3x4x5xf32>) -> tensor<3x4x5xf32>
  // x[i] and x[:, i]: the broadcast shape in the indexed dim's place.
  %7 = pyop "index"(%x, %i) : (tensor<3x4x5xf32>, tensor<2xi64>) -> tensor<2x4x5xf32>
  %8 = pyop "index"(%x, None, %j) : (tensor<3x4x5xf32>, tensor<2x1xi32>) -> tensor<3x2x1x5xf32>
  // x[i, j] broadcast; x[i, :, j] apart: the broadcast dims go first.
  %9 = pyop "index"(%x, %i, %j) : (tensor<3x4x5xf32>, tensor<2xi64>, tensor<2x1xi32>) -> tensor<2x2x5xf32>
  %10 = pyop "index"(%x, %i, None, %j) : (tensor<3x4x5xf32>, tensor<2xi64>, tensor<2x1xi32>) -> tensor<2x2x4xf32>
  %11 = pyop "index_put"(%x, None, %i, %v) : (tensor<3x4x5xf32>, tensor<2xi64>, tensor<2x5xf32>) -> tensor<3x4x5xf32>
  %12 = pyop "index_put"(%x, %i, %z, True) : (tensor<3x4x5xf32>, tensor<2xi64>, tensor<f32>) -> tensor<3x4x5xf32>
  // slice_scatter and select_scatter cast src to self's dtype.
  %13 = pyop "slice_scatter"(%x, %g, 1, 1, None, 2) : (tensor<3x4x5xf32>, tensor<3x2x5xi64>) -> tensor<3x4x5xf32>
  %14 = pyop "select_scatter"(%x, %r, 1, -1) : (tensor<3x4x5xf32>, tensor<3x5xi64>) -> tensor<3x4x5xf32>
  ret
}

// -----

trace.graph @index_select_matrix(%x: tensor<3x4xf32>, %i: tensor<2x2xi64>) -> () {
  // expected-error @+1 {{"index_select": index must be a vector or 0-d, got shape [2, 2]}}
  %0 = pyop "index_select"(%x, 0, %i) : (tensor<3x4xf32>, tensor<2x2xi64>) -> tensor<4x4xf32>
  ret
}

// -----

trace.graph @gather_float_index(%x: tensor<3x4xf32>, %i: tensor<3x4xf32>) -> () {
  // expected-error @+1 {{"gather": index must be int64 or int32, got f32}}
  %0 = pyop "gather"(%x, 0, %i) : (tensor<3x4xf32>, tensor<3x4xf32>) -> tensor<3x4xf32>
  ret
}

// -----

trace.graph @gather_larger(%x: tensor<3x4xf32>, %i: tensor<4x4xi64>) -> () {
  // expected-error @+1 {{"gather": index [4, 4] is larger than self [3, 4] outside dim 1}}
  %0 = pyop "gather"(%x, 1, %i) : (tensor<3x4xf32>, tensor<4x4xi64>) -> tensor<4x4xf32>
  ret
}

// -----

trace.graph @scatter_dtype(%x: tensor<3x4xf32>, %i: tensor<3x4xi64>, %s: tensor<3x4xf64>) -> () {
  // expected-error @+1 {{"scatter": src must have self's dtype f32, got f64}}
  %0 = pyop "scatter"(%x, 0, %i, %s) : (tensor<3x4xf32>, tensor<3x4xi64>, tensor<3x4xf64>) -> tensor<3x4xf32>
  ret
}

// -----

trace.graph @scatter_reduce_name(%x: tensor<3x4xf32>, %i: tensor<3x4xi64>) -> () {
  // expected-error @+1 {{"scatter_reduce": argument #4 (reduce) must be one of "sum", "prod", "mean", "amax", "amin"}}
  %0 = pyop "scatter_reduce"(%x, 0, %i, %x, "max") : (tensor<3x4xf32>, tensor<3x4xi64>, tensor<3x4xf32>) -> tensor<3x4xf32>
  ret
}

// -----

trace.graph @index_bool_mask(%x: tensor<3x4xf32>, %m: tensor<3xi1>) -> () {
  // expected-error @+1 {{"index": an index tensor must be int64 or int32, got i1 (boolean masks are not supported}}
  %0 = pyop "index"(%x, %m) : (tensor<3x4xf32>, tensor<3xi1>) -> tensor<?x4xf32>
  ret
}

// -----

trace.graph @index_too_many(%x: tensor<3xf32>, %i: tensor<2xi64>) -> () {
  // expected-error @+1 {{"index": too many indices for a tensor of rank 1 (got 2)}}
  %0 = pyop "index"(%x, %i, %i) : (tensor<3xf32>, tensor<2xi64>, tensor<2xi64>) -> tensor<2xf32>
  ret
}

// -----

trace.graph @index_broadcast(%x: tensor<3x4xf32>, %i: tensor<2xi64>, %j: tensor<3xi64>) -> () {
  // expected-error @+1 {{"index": the index tensors' shapes [2] and [3] cannot be broadcast together}}
  %0 = pyop "index"(%x, %i, %j) : (tensor<3x4xf32>, tensor<2xi64>, tensor<3xi64>) -> tensor<2xf32>
  ret
}

// -----

trace.graph @index_put_values(%x: tensor<3x4xf32>, %i: tensor<2xi64>, %v: tensor<3x4xf32>) -> () {
  // expected-error @+1 {{"index_put": values [3, 4] do not broadcast to the indexed shape [2, 4]}}
  %0 = pyop "index_put"(%x, %i, %v) : (tensor<3x4xf32>, tensor<2xi64>, tensor<3x4xf32>) -> tensor<3x4xf32>
  ret
}

// -----

trace.graph @slice_scatter_shape(%x: tensor<3x4xf32>, %s: tensor<3x3xf32>) -> () {
  // expected-error @+1 {{"slice_scatter": src [3, 3] must have the slice's shape [3, 2]}}
  %0 = pyop "slice_scatter"(%x, %s, 1, 0, None, 2) : (tensor<3x4xf32>, tensor<3x3xf32>) -> tensor<3x4xf32>
  ret
}

// -----

// Pooling, padding, resampling and data movement.
trace.graph @resample(%x: tensor<2x3x7x8xf32>, %u: tensor<1x2x5x6xui8>, %i: tensor<2x3xi32>,
                      %d: tensor<2x?x5x6xf32>, %b: tensor<2x3xi1>) -> () {
  // avg_pool2d: stride [] is the kernel; ceil_mode lets a window start in
  // the padding only if it starts in the input.
  %0 = pyop "avg_pool2d"(%x, [2, 2], []) : (tensor<2x3x7x8xf32>) -> tensor<2x3x3x4xf32>
  %1 = pyop "avg_pool2d"(%x, [3, 3], [2, 2], 1, True, False, 2) : (tensor<2x3x7x8xf32>) -> tensor<2x3x4x5xf32>
  // constant_pad_nd pads from the last dim backward; negative pads crop.
  %2 = pyop "constant_pad_nd"(%x, [1, 2, -3, 0], 0.5) : (tensor<2x3x7x8xf32>) -> tensor<2x3x4x11xf32>
  %3 = pyop "constant_pad_nd"(%b, [1, 1], True) : (tensor<2x3xi1>) -> tensor<2x5xi1>
  %4 = pyop "reflection_pad2d"(%x, [1, 2, 3, 4]) : (tensor<2x3x7x8xf32>) -> tensor<2x3x14x11xf32>
  %5 = pyop "replication_pad1d"(%i, [-1, 4]) : (tensor<2x3xi32>) -> tensor<2x6xi32>
  %6 = pyop "reflection_pad3d"(%x, [1, 1, 1, 1, 1, 1]) : (tensor<2x3x7x8xf32>) -> tensor<2x5x9x10xf32>
  // upsample .vec: output_size, or the scales' products truncated.
  %7 = pyop "upsample_nearest2d"(%u, None, [1.5, 0.5]) : (tensor<1x2x5x6xui8>) -> tensor<1x2x7x3xui8>
  %8 = pyop "upsample_bilinear2d"(%x, [4, 9], True, None) : (tensor<2x3x7x8xf32>) -> tensor<2x3x4x9xf32>
  %9 = pyop "upsample_nearest2d"(%d, None, [2.0, 2.0]) : (tensor<2x?x5x6xf32>) -> tensor<2x?x10x12xf32>
  // flip keeps the shape; repeat may add leading dims.
  %10 = pyop "flip"(%i, [0, -1]) : (tensor<2x3xi32>) -> tensor<2x3xi32>
  %11 = pyop "repeat"(%i, [2, 1, 3]) : (tensor<2x3xi32>) -> tensor<2x2x9xi32>
  %12 = pyop "repeat"(%d, [1, 2, 1, 1]) : (tensor<2x?x5x6xf32>) -> tensor<2x?x5x6xf32>
  %13 = pyop "_adaptive_avg_pool2d"(%x, [2, 3]) : (tensor<2x3x7x8xf32>) -> tensor<2x3x2x3xf32>
  ret
}

// -----

trace.graph @avg_pool2d_int(%i: tensor<1x1x4x4xi32>) -> () {
  // expected-error @+1 {{"avg_pool2d": takes floating-point or i64 tensors, got i32}}
  %0 = pyop "avg_pool2d"(%i, 2) : (tensor<1x1x4x4xi32>) -> tensor<1x1x2x2xi32>
  ret
}

// -----

trace.graph @avg_pool2d_divisor(%x: tensor<1x1x4x4xf32>) -> () {
  // expected-error @+1 {{"avg_pool2d": divisor must be not zero}}
  %0 = pyop "avg_pool2d"(%x, 2, 2, 0, False, True, 0) : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  ret
}

// -----

trace.graph @constant_pad_nd_negative(%x: tensor<2x3xf32>) -> () {
  // expected-error @+1 {{"constant_pad_nd": The input size 3, plus negative padding -2 and -2 resulted in a negative output size, which is invalid. Check dimension 1 of your input.}}
  %0 = pyop "constant_pad_nd"(%x, [-2, -2]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  ret
}

// -----

trace.graph @reflection_pad_too_large(%x: tensor<2x3xf32>) -> () {
  // expected-error @+1 {{"reflection_pad1d": Argument #4: Padding size should be less than the corresponding input dimension, but got: padding (3, 0) at dimension 1 of input [2, 3]}}
  %0 = pyop "reflection_pad1d"(%x, [3, 0]) : (tensor<2x3xf32>) -> tensor<2x6xf32>
  ret
}

// -----

trace.graph @replication_pad_bool(%b: tensor<2x3xi1>) -> () {
  // expected-error @+1 {{"replication_pad1d": takes no bool tensor}}
  %0 = pyop "replication_pad1d"(%b, [1, 1]) : (tensor<2x3xi1>) -> tensor<2x5xi1>
  ret
}

// -----

trace.graph @upsample_both(%x: tensor<1x1x2x2xf32>) -> () {
  // expected-error @+1 {{"upsample_nearest2d": Must specify exactly one of output_size and scale_factors}}
  %0 = pyop "upsample_nearest2d"(%x, [4, 4], [2.0, 2.0]) : (tensor<1x1x2x2xf32>) -> tensor<1x1x4x4xf32>
  ret
}

// -----

trace.graph @upsample_bilinear_int(%x: tensor<1x1x2x2xi64>) -> () {
  // expected-error @+1 {{"upsample_bilinear2d": takes floating-point or u8 tensors, got i64}}
  %0 = pyop "upsample_bilinear2d"(%x, [4, 4], False, None) : (tensor<1x1x2x2xi64>) -> tensor<1x1x4x4xi64>
  ret
}

// -----

trace.graph @repeat_short(%x: tensor<2x3xf32>) -> () {
  // expected-error @+1 {{"repeat": Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor}}
  %0 = pyop "repeat"(%x, [2]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  ret
}

// -----

trace.graph @flip_twice(%x: tensor<2x3xf32>) -> () {
  // expected-error @+1 {{"flip": dim 1 appears more than once in the list of dims}}
  %0 = pyop "flip"(%x, [1, -1]) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  ret
}

// -----

trace.graph @creation_and_two_results(%x: tensor<2x3xf32>, %b: tensor<2x3xi1>, %g: tensor<2x4x3xf32>, %w: tensor<4xf32>) -> () {
  // arange: int64 from ints, float32 from a float, ceil((end - start) / step).
  %0 = pyop "arange"(0, 5) : () -> tensor<5xi64>
  %1 = pyop "arange"(0, 1, 0.25) : () -> tensor<4xf32>
  %2 = pyop "arange"(10, 0, -3) : () -> tensor<4xi64>
  // int64 from a float bound: the length in double, 0 .. 5.
  %3 = pyop "arange"(0, 5.5, 1, "torch.int64") : () -> tensor<6xi64>
  // max.dim and min.dim: the values in self's dtype (bools too), i64 positions.
  %4:2 = pyop "max"(%x, 1) : (tensor<2x3xf32>) -> (tensor<2xf32>, tensor<2xi64>)
  %5:2 = pyop "min"(%b, 0, True) : (tensor<2x3xi1>) -> (tensor<1x3xi1>, tensor<1x3xi64>)
  // native_group_norm: out, and mean and rstd [N, group].
  %6:3 = pyop "native_group_norm"(%g, %w, None, 2, 4, 3, 2, 1.0e-05) : (tensor<2x4x3xf32>, tensor<4xf32>) -> (tensor<2x4x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  // sort keeps the shape; topk takes k along dim (-1 by default).
  %7:2 = pyop "sort"(%x, 0, True) : (tensor<2x3xf32>) -> (tensor<2x3xf32>, tensor<2x3xi64>)
  %8:2 = pyop "topk"(%b, 2) : (tensor<2x3xi1>) -> (tensor<2x2xi1>, tensor<2x2xi64>)
  %9:2 = pyop "topk"(%x, 0, 0, False) : (tensor<2x3xf32>) -> (tensor<0x3xf32>, tensor<0x3xi64>)
  ret
}

// -----

trace.graph @topk_k(%x: tensor<2x3xf32>) -> () {
  // expected-error @+1 {{"topk": selected index k out of range: k = 4 for a dim of size 3}}
  %0:2 = pyop "topk"(%x, 4) : (tensor<2x3xf32>) -> (tensor<2x4xf32>, tensor<2x4xi64>)
  ret
}

// -----

trace.graph @arange_step_zero() -> () {
  // expected-error @+1 {{"arange": step must be nonzero}}
  %0 = pyop "arange"(0, 5, 0) : () -> tensor<0xi64>
  ret
}

// -----

trace.graph @arange_sign() -> () {
  // expected-error @+1 {{"arange": upper bound and lower bound inconsistent with step sign}}
  %0 = pyop "arange"(5, 0) : () -> tensor<0xi64>
  ret
}

// -----

trace.graph @arange_bool() -> () {
  // expected-error @+1 {{"arange": arange has no bool kernel (dtype=torch.bool)}}
  %0 = pyop "arange"(0, 2, 1, "torch.bool") : () -> tensor<2xi1>
  ret
}

// -----

trace.graph @max_no_dim(%x: tensor<2x3xf32>) -> () {
  // expected-error @+1 {{"max": argument #1 (dim) must be an int}}
  %0:2 = pyop "max"(%x, None) : (tensor<2x3xf32>) -> (tensor<f32>, tensor<i64>)
  ret
}

// -----

trace.graph @max_empty_group(%x: tensor<0x3xf32>) -> () {
  // expected-error @+1 {{"max": reduction dim 0 has size 0, and a reduction without an identity needs at least one element}}
  %0:2 = pyop "max"(%x, 0) : (tensor<0x3xf32>) -> (tensor<3xf32>, tensor<3xi64>)
  ret
}

// -----

trace.graph @group_norm_groups(%g: tensor<2x4x3xf32>) -> () {
  // expected-error @+1 {{"native_group_norm": Expected number of channels in input to be divisible by num_groups, but got C=4 and num_groups=3}}
  %0:3 = pyop "native_group_norm"(%g, None, None, 2, 4, 3, 3, 1.0e-05) : (tensor<2x4x3xf32>) -> (tensor<2x4x3xf32>, tensor<2x3xf32>, tensor<2x3xf32>)
  ret
}

// -----

trace.graph @group_norm_weight(%g: tensor<2x4x3xf32>, %w: tensor<3xf32>) -> () {
  // expected-error @+1 {{"native_group_norm": weight [3] must have shape [C=4]}}
  %0:3 = pyop "native_group_norm"(%g, %w, None, 2, 4, 3, 2, 1.0e-05) : (tensor<2x4x3xf32>, tensor<3xf32>) -> (tensor<2x4x3xf32>, tensor<2x2xf32>, tensor<2x2xf32>)
  ret
}
