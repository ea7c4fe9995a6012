//===- TraceOps.td - trace dialect operations --------------*- tablegen -*-===//

#ifndef TRACEIR_DIALECT_TRACEOPS_TD
#define TRACEIR_DIALECT_TRACEOPS_TD

include "TraceIR/Dialect/TraceDialect.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpAsmInterface.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/ControlFlowInterfaces.td"
include "mlir/Interfaces/FunctionInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

//===----------------------------------------------------------------------===//
// trace.graph
//===----------------------------------------------------------------------===//

def Trace_GraphOp : Trace_Op<"graph", [
    FunctionOpInterface, IsolatedFromAbove, OpAsmOpInterface]> {
  let summary = "A closed traced graph in ANF form";
  let description = [{
    A graph has one block and no nested regions: a flat instruction list, as
    the tracer recorded it. Each argument is either a parameter, owned by the
    caller and named by its state_dict key (`trace.param`), or an input
    (`trace.input`, optionally `trace.donated`, which lets the graph free it).
    The body's last instruction is `trace.ret`.

    The verifier also checks the lifetime rules of `trace.free`: no use of a
    storage after it was freed, no double free, and no free of a parameter,
    a constant or an input that was not donated. Views share their base's
    storage (see the op registry), so they are checked too.

    Example:

    ```mlir
    trace.graph @mlp(%w: tensor<4x3xf32> {trace.param = "fc.weight"},
                     %x: tensor<2x3xf32> {trace.input = "x", trace.donated})
        -> tensor<2x4xf32> {
      %0 = pyop "linear"(%x, %w, None) : (tensor<2x3xf32>, tensor<4x3xf32>) -> tensor<2x4xf32>
      free %x : tensor<2x3xf32>
      %1 = pyop "relu"(%0) : (tensor<2x4xf32>) -> tensor<2x4xf32>
      free %0 : tensor<2x4xf32>
      ret %1 : tensor<2x4xf32>
    }
    ```
  }];

  let arguments = (ins SymbolNameAttr:$sym_name,
                       TypeAttrOf<FunctionType>:$function_type,
                       OptionalAttr<StrAttr>:$sym_visibility,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let regions = (region AnyRegion:$body);

  let builders = [OpBuilder<(ins "::llvm::StringRef":$name,
                                 "::mlir::FunctionType":$type,
                                 CArg<"::llvm::ArrayRef<::mlir::DictionaryAttr>", "{}">:$argAttrs)>];

  let extraClassDeclaration = [{
    ::mlir::Region *getCallableRegion() { return &getBody(); }
    ::llvm::ArrayRef<::mlir::Type> getArgumentTypes() {
      return getFunctionType().getInputs();
    }
    ::llvm::ArrayRef<::mlir::Type> getResultTypes() {
      return getFunctionType().getResults();
    }
    bool isDeclaration() { return false; }

    static ::llvm::StringRef getDefaultDialect() { return "trace"; }
    void getAsmBlockArgumentNames(::mlir::Region &region,
                                  ::mlir::OpAsmSetValueNameFn setNameFn);

    /// The parameter name of argument `i`, or an empty string for an input.
    ::llvm::StringRef getParamName(unsigned i);
    /// The input name of argument `i`, or an empty string for a parameter.
    ::llvm::StringRef getInputName(unsigned i);
    /// Whether argument `i` is an input the graph may free.
    bool isDonated(unsigned i);
    bool isParam(unsigned i) { return !getParamName(i).empty(); }
  }];
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
  let hasRegionVerifier = 1;
}

//===----------------------------------------------------------------------===//
// trace.constant
//===----------------------------------------------------------------------===//

def Trace_ConstantOp : Trace_Op<"constant", [
    ConstantLike, Pure, HasParent<"GraphOp">, AllTypesMatch<["value", "result"]>]> {
  let summary = "A tensor constant";
  let description = [{
    Tensor constants are instructions, never inline operands. Large blobs use
    `dense_resource`. A constant's storage belongs to the graph, not to a
    run: it is never freed.

    Example:

    ```mlir
    %c = constant dense<[1.0, 2.0]> : tensor<2xf32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "attr-dict $value";
  let hasFolder = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// trace.pyop
//===----------------------------------------------------------------------===//

// Not HasParent<"GraphOp">: --convert-trace-to-linalg leaves the ops it cannot
// lower inside the func.func it makes of a graph, so the verifier accepts any
// function as the parent (see PyOp::verify).
def Trace_PyOp : Trace_Op<"pyop", [
    DeclareOpInterfaceMethods<MemoryEffectsOpInterface>]> {
  let summary = "A traced Python operator";
  let description = [{
    A call of the operator `op_name`. Tensors are SSA operands; Python
    scalars (int, float, bool, None, str, tuples and lists of them) are kept
    out of band in `scalars`. `cconv` has one letter per argument of the
    original call, `t` for the next tensor operand and `s` for the next
    scalar, so the original argument list can be re-interleaved. Several
    results are allowed.

    The custom form prints the re-interleaved argument list, close to the
    2017 trace text `%14 = Embedding %11, %0, -1, None, 2, False, False`:

    ```mlir
    %14 = pyop "embedding"(%11, %0, -1, None, 2.0, False, False)
        : (tensor<35x20xi64>, tensor<10000x200xf32>) -> tensor<35x20x200xf32>
    %a, %b = pyop "max"(%x, 1, True) : (tensor<3x4xf32>) -> (tensor<3x1xf32>, tensor<3x1xi64>)
    ```

    Scalars print as Python literals: `None`, `True`, `False`, integers,
    floats (always with a `.` or exponent; non-finite ones as hexadecimal
    `0x7FF0000000000000 : f64`), strings, `(tuples,)` and `[lists]`.

    Ops the op registry knows are checked against its shape and dtype
    inference; unknown names are legal and treated conservatively (their
    results may alias their inputs, and they may have side effects).

    The parent is a `trace.graph`, or a function (`func.func`) that
    `--convert-trace-to-linalg` made of one and could not lower completely.
  }];
  let arguments = (ins StrAttr:$op_name, Variadic<AnyTensor>:$tensors,
                       ArrayAttr:$scalars, StrAttr:$cconv);
  let results = (outs Variadic<AnyTensor>:$results);
  let builders = [OpBuilder<(ins "::mlir::TypeRange":$resultTypes,
                                 "::llvm::StringRef":$opName,
                                 "::mlir::ValueRange":$tensors,
                                 "::llvm::ArrayRef<::mlir::Attribute>":$scalars,
                                 "::llvm::StringRef":$cconv)>];
  let extraClassDeclaration = [{
    /// What the op registry knows of this op, or null for an unknown name.
    const ::mlir::trace::OpInfo *getOpInfo() {
      return static_cast<TraceDialect *>((*this)->getDialect())
          ->lookupOpInfo(getOpNameAttr());
    }
  }];
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// trace.free
//===----------------------------------------------------------------------===//

def Trace_FreeOp : Trace_Op<"free", [HasParent<"GraphOp">]> {
  let summary = "Release the storage of a tensor now";
  let description = [{
    Releases the storage of `tensor` (and so of every view of it). Inserted
    by `--free-dead-tensors` right after the storage's last use. The graph
    verifier rejects any use after the free, a second free of the same
    storage, and a free of a parameter, a constant or an input that was not
    donated.

    Example:

    ```mlir
    free %3 : tensor<35x20x200xf32>
    ```
  }];
  // MemWrite as well as MemFree: CSE stops only at writes, and merging a
  // read across a free would revive the freed value.
  let arguments = (ins Arg<AnyTensor, "the tensor whose storage is released",
                           [MemFree, MemWrite]>:$tensor);
  let assemblyFormat = "$tensor attr-dict `:` type($tensor)";
}

//===----------------------------------------------------------------------===//
// trace.ret
//===----------------------------------------------------------------------===//

def Trace_RetOp : Trace_Op<"ret", [
    Pure, HasParent<"GraphOp">, ReturnLike, Terminator]> {
  let summary = "Return the graph's results";
  let description = [{
    Tuples up the graph's results; their types must match the graph's
    result types. Returned storages are never freed by the graph.

    Example:

    ```mlir
    ret %21, %16 : tensor<35x20x10000xf32>, tensor<2x20x200xf32>
    ```
  }];
  let arguments = (ins Variadic<AnyTensor>:$operands);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, {}); }]>];
  let assemblyFormat = "attr-dict ($operands^ `:` type($operands))?";
  let hasVerifier = 1;
}

#endif // TRACEIR_DIALECT_TRACEOPS_TD
