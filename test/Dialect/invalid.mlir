// RUN: trace-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

// A cconv letter other than 't' or 's'.
trace.graph @bad_cconv_letter(%x: tensor<2xf32>) -> () {
  // expected-error @+1 {{cconv 'tx' has 'x' at position 1; only 't' (tensor) and 's' (scalar) are allowed}}
  "trace.pyop"(%x) <{op_name = "foo", scalars = [1], cconv = "tx"}> : (tensor<2xf32>) -> ()
  ret
}

// -----

// cconv counts must agree with the operands and scalars.
trace.graph @bad_cconv_count(%x: tensor<2xf32>) -> () {
  // expected-error @+1 {{cconv 'tts' has 2 't' and 1 's' but the op has 1 tensor operands and 1 scalars}}
  "trace.pyop"(%x) <{op_name = "foo", scalars = [1], cconv = "tts"}> : (tensor<2xf32>) -> ()
  ret
}

// -----

// Scalars must be Python scalars: an i32 is not one (Python ints are i64).
trace.graph @bad_scalar(%x: tensor<2xf32>) -> () {
  // expected-error @+1 {{scalar #0 is 1 : i32, which is not a Python scalar}}
  "trace.pyop"(%x) <{op_name = "foo", scalars = [1 : i32], cconv = "ts"}> : (tensor<2xf32>) -> ()
  ret
}

// -----

// A registry op whose declared result type disagrees with inference.
trace.graph @bad_result_type(%x: tensor<2x3xf32>) -> () {
  // expected-error @+1 {{"transpose" result #0 is declared 'tensor<2x3xf32>' but the arguments give 'tensor<3x2xf32>'}}
  %0 = pyop "transpose"(%x, 0, 1) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  ret
}

// -----

// A registry op whose arguments are malformed.
trace.graph @bad_args(%x: tensor<3xf32>, %y: tensor<4xf32>) -> () {
  // expected-error @+1 {{"add": shapes [3] and [4] cannot be broadcast together}}
  %0 = pyop "add"(%x, %y) : (tensor<3xf32>, tensor<4xf32>) -> tensor<4xf32>
  ret
}

// -----

// A registry op with the wrong number of results.
trace.graph @bad_result_count(%x: tensor<3xf32>) -> () {
  // expected-error @+1 {{"relu" has 1 result but 2 are declared}}
  %0:2 = pyop "relu"(%x) : (tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>)
  ret
}

// -----

// Use after free.
trace.graph @use_after_free(%x: tensor<3xf32> {trace.donated}) -> () {
  %0 = pyop "relu"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-note @+1 {{freed here}}
  free %0 : tensor<3xf32>
  // expected-error @+1 {{uses result #0 of pyop "relu" (operand #0) after its storage was freed}}
  %1 = pyop "neg"(%0) : (tensor<3xf32>) -> tensor<3xf32>
  ret
}

// -----

// A view dies with its base: using it after the base's free is a use after
// free.
trace.graph @view_after_base_free(%x: tensor<2x3xf32>) -> () {
  %0 = pyop "relu"(%x) : (tensor<2x3xf32>) -> tensor<2x3xf32>
  %1 = pyop "t"(%0) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // expected-note @+1 {{freed here}}
  free %0 : tensor<2x3xf32>
  // expected-error @+1 {{uses result #0 of pyop "t" (operand #0) after its storage was freed}}
  %2 = pyop "neg"(%1) : (tensor<3x2xf32>) -> tensor<3x2xf32>
  ret
}

// -----

// Returning a freed value is a use after free too.
trace.graph @return_freed(%x: tensor<3xf32>) -> tensor<3xf32> {
  %0 = pyop "relu"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-note @+1 {{freed here}}
  free %0 : tensor<3xf32>
  // expected-error @+1 {{'trace.ret' op uses result #0 of pyop "relu" (operand #0) after its storage was freed}}
  ret %0 : tensor<3xf32>
}

// -----

// Double free.
trace.graph @double_free(%x: tensor<3xf32>) -> () {
  %0 = pyop "relu"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-note @+1 {{first freed here}}
  free %0 : tensor<3xf32>
  // expected-error @+1 {{double free of the storage of result #0 of pyop "relu"}}
  free %0 : tensor<3xf32>
  ret
}

// -----

// Freeing a view frees its base's storage, so freeing both is a double free.
trace.graph @double_free_through_view(%x: tensor<6xf32>) -> () {
  %0 = pyop "relu"(%x) : (tensor<6xf32>) -> tensor<6xf32>
  %1 = pyop "view"(%0, (2, 3)) : (tensor<6xf32>) -> tensor<2x3xf32>
  // expected-note @+1 {{first freed here}}
  free %0 : tensor<6xf32>
  // expected-error @+1 {{double free of the storage of result #0 of pyop "view" (through a view of result #0 of pyop "relu")}}
  free %1 : tensor<2x3xf32>
  ret
}

// -----

// Parameters belong to the caller.
trace.graph @free_param(%w: tensor<3xf32> {trace.param = "fc.weight"}) -> () {
  // expected-error @+1 {{cannot free parameter 'fc.weight': parameters are owned by the caller}}
  free %w : tensor<3xf32>
  ret
}

// -----

// ... also through a view.
trace.graph @free_param_view(%w: tensor<2x3xf32> {trace.param = "fc.weight"}) -> () {
  %0 = pyop "t"(%w) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // expected-error @+1 {{cannot free parameter 'fc.weight' (through a view of argument #0 (parameter 'fc.weight'))}}
  free %0 : tensor<3x2xf32>
  ret
}

// -----

// Constants belong to the graph.
trace.graph @free_constant() -> () {
  %c = constant dense<1.0> : tensor<3xf32>
  // expected-error @+1 {{cannot free a constant: constants belong to the graph, not to a run}}
  free %c : tensor<3xf32>
  ret
}

// -----

// Inputs that are not donated belong to the caller.
trace.graph @free_input(%x: tensor<3xf32> {trace.input = "x"}) -> () {
  // expected-error @+1 {{cannot free argument #0 (input 'x'): it is not donated (mark it trace.donated)}}
  free %x : tensor<3xf32>
  ret
}

// -----

// trace.ret only terminates a graph.
// expected-error @+1 {{'trace.ret' op expects parent op 'trace.graph'}}
trace.ret

// -----

// trace.free only lives in a graph.
"test.func"() ({
^bb0(%x: tensor<3xf32>):
  // expected-error @+1 {{'trace.free' op expects parent op 'trace.graph'}}
  trace.free %x : tensor<3xf32>
  "test.return"() : () -> ()
}) : () -> ()

// -----

// A graph is one flat block.
// expected-error @+1 {{'trace.graph' op body must have exactly one block, found 2; a traced graph is a flat ANF instruction list}}
trace.graph @two_blocks(%x: tensor<3xf32>) -> () {
  ret
^bb1:
  ret
}

// -----

// No nested regions.
trace.graph @nested(%x: tensor<3xf32>) -> () {
  // expected-error @+1 {{has a nested region, but a trace.graph body must be flat (ANF)}}
  "test.region_op"() ({
    "test.terminator"() : () -> ()
  }) : () -> ()
  ret
}

// -----

// The body ends with trace.ret (MLIR itself rejects a block without a
// terminator).
trace.graph @no_ret(%x: tensor<3xf32>) -> () {
  // expected-error @+1 {{block with no terminator}}
  %0 = pyop "relu"(%x) : (tensor<3xf32>) -> tensor<3xf32>
}

// -----

// A graph has a body.
// expected-error @+1 {{'trace.graph' op body must have exactly one block, found 0}}
"trace.graph"() <{function_type = () -> (), sym_name = "empty"}> ({}) : () -> ()

// -----

// ret matches the graph's result types.
trace.graph @ret_count(%x: tensor<3xf32>) -> (tensor<3xf32>, tensor<3xf32>) {
  // expected-error @+1 {{returns 1 values but graph @ret_count declares 2 results}}
  ret %x : tensor<3xf32>
}

// -----

trace.graph @ret_type(%x: tensor<3xf32>) -> tensor<4xf32> {
  // expected-error @+1 {{result #0 has type 'tensor<3xf32>' but graph @ret_type declares 'tensor<4xf32>'}}
  ret %x : tensor<3xf32>
}

// -----

// A parameter cannot be donated.
// expected-error @+1 {{argument #0: parameter 'w' cannot also be an input or donated}}
trace.graph @param_donated(%w: tensor<3xf32> {trace.param = "w", trace.donated}) -> () {
  ret
}

// -----

// Argument attributes are checked.
// expected-error @+1 {{argument #0: unknown trace argument attribute 'trace.weight'}}
trace.graph @bad_arg_attr(%w: tensor<3xf32> {trace.weight = "w"}) -> () {
  ret
}

// -----

// expected-error @+1 {{argument #0: 'trace.param' must be a non-empty string}}
trace.graph @empty_param(%w: tensor<3xf32> {trace.param = ""}) -> () {
  ret
}

// -----

// A custom-form scalar that is not a Python literal.
trace.graph @bad_literal(%x: tensor<3xf32>) -> () {
  // expected-error @+1 {{expected a Python scalar (int, float, bool, None, str, tuple or list), got 1 : i32}}
  pyop "foo"(%x, 1 : i32) : (tensor<3xf32>) -> ()
  ret
}

// -----

// Parameters and inputs are bound by name, so names are unique.
// expected-error @+1 {{arguments #0 and #1 have the same parameter name 'w'}}
trace.graph @duplicate_param(%a: tensor<3xf32> {trace.param = "w"}, %b: tensor<3xf32> {trace.param = "w"}) -> () {
  ret
}

// -----

// expected-error @+1 {{arguments #0 and #2 have the same input name 'x'}}
trace.graph @duplicate_input(%a: tensor<3xf32> {trace.input = "x"}, %w: tensor<3xf32> {trace.param = "x"}, %b: tensor<3xf32> {trace.input = "x"}) -> () {
  ret
}

// -----

// A result of an op the registry does not know may be a view of an
// operand: freeing it is rejected.
trace.graph @free_unknown_result(%x: tensor<3xf32> {trace.donated}) -> () {
  %0 = pyop "mystery"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-error @+1 {{cannot free result #0 of pyop "mystery": an op the registry does not know may return a view of its operands}}
  free %0 : tensor<3xf32>
  ret
}

// -----

// The message names the freed view and its base.
trace.graph @free_input_view(%x: tensor<2x3xf32> {trace.input = "x"}) -> () {
  %0 = pyop "t"(%x) : (tensor<2x3xf32>) -> tensor<3x2xf32>
  // expected-error @+1 {{cannot free result #0 of pyop "t" (through a view of argument #0 (input 'x')): it is not donated}}
  free %0 : tensor<3x2xf32>
  ret
}

// -----

// A use before its definition (MLIR's dominance check).
trace.graph @use_before_def(%x: tensor<3xf32>) -> () {
  // expected-error @+1 {{operand #0 does not dominate this use}}
  %0 = pyop "neg"(%1) : (tensor<3xf32>) -> tensor<3xf32>
  // expected-note @+1 {{operand defined here}}
  %1 = pyop "relu"(%x) : (tensor<3xf32>) -> tensor<3xf32>
  ret
}

// -----

// Instructions live in a graph.
// expected-error @+1 {{'trace.pyop' op expects parent op 'trace.graph'}}
%0 = trace.pyop "relu"() : () -> tensor<3xf32>

// -----

// expected-error @+1 {{'trace.constant' op expects parent op 'trace.graph'}}
%0 = trace.constant dense<1.0> : tensor<3xf32>

// -----

// The tensor size limit (2^48 bytes): every tensor type the dialect's ops
// carry is checked, so later code may multiply dims without overflow. The
// limit itself is representable, and dynamic dims are not counted.
trace.graph @size_limit_ok(%x: tensor<70368744177664xf32>, %y: tensor<?x281474976710656xi1>) -> tensor<70368744177664xf32> {
  ret %x : tensor<70368744177664xf32>
}

// -----

// A result of an op the registry does not know: 2^32 x 2^32 elements used to
// wrap to 0 at run time.
trace.graph @size_limit_pyop(%x: tensor<2xf32>) -> () {
  // expected-error @+1 {{'trace.pyop' op result #0 type 'tensor<4294967296x4294967296xf32>' holds 2^64 elements of 4 bytes, over TraceIR's limit of 2^48 bytes (281474976710656)}}
  %0 = pyop "mystery"(%x) : (tensor<2xf32>) -> tensor<4294967296x4294967296xf32>
  ret
}

// -----

// One byte over the limit, counted in the element type's bytes.
trace.graph @size_limit_operand(%x: tensor<2xf32>) -> () {
  // expected-error @+1 {{'trace.pyop' op result #0 type 'tensor<70368744177665xf32>' holds 70368744177665 elements of 4 bytes}}
  %0 = pyop "mystery"(%x) : (tensor<2xf32>) -> tensor<70368744177665xf32>
  ret
}

// -----

trace.graph @size_limit_constant() -> () {
  // expected-error @+1 {{'trace.constant' op result #0 type 'tensor<4294967296x4294967296xf32>' holds 2^64 elements of 4 bytes}}
  %0 = constant dense<1.0> : tensor<4294967296x4294967296xf32>
  ret
}

// -----

// Arguments are named by their parameter or input name.
// expected-error @+1 {{'trace.graph' op argument #1 (parameter 'w') type 'tensor<281474976710656x2xi1>' holds 2^49 elements of 1 byte}}
trace.graph @size_limit_param(%x: tensor<2xf32>, %w: tensor<281474976710656x2xi1> {trace.param = "w"}) -> () {
  ret
}

// -----

// expected-error @+1 {{'trace.graph' op result #0 type 'tensor<9223372036854775807x2xi64>' holds 18446744073709551614 elements of 8 bytes}}
trace.graph @size_limit_graph_result(%x: tensor<2xf32>) -> tensor<9223372036854775807x2xi64> {
  %0 = "test.make"() : () -> tensor<9223372036854775807x2xi64>
  ret %0 : tensor<9223372036854775807x2xi64>
}

// -----

// A zero dim does not make an overflowing product of the other dims
// representable.
// expected-error @+1 {{'trace.graph' op argument #0 (input 'x') type 'tensor<0x4294967296x4294967296xf32>' holds no elements, but its other dims multiply to 2^64, which overflows int64}}
trace.graph @size_limit_zero_dim(%x: tensor<0x4294967296x4294967296xf32> {trace.input = "x"}) -> () {
  ret
}

// -----

// The graph's own check runs first; ret checks its operands as well, for a
// ret outside a checked graph signature.
trace.graph @size_limit_ret(%x: tensor<2xf32>) -> () {
  %0 = "test.make"() : () -> tensor<4294967296x4294967296xf32>
  // expected-error @+1 {{'trace.ret' op operand #0 type 'tensor<4294967296x4294967296xf32>' holds 2^64 elements}}
  ret %0 : tensor<4294967296x4294967296xf32>
}
