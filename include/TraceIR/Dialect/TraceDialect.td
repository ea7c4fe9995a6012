//===- TraceDialect.td - The trace dialect -----------------*- tablegen -*-===//
//
// The trace dialect models a traced neural-network graph in ANF form, as the
// 2017 PyTorch tracer produced it: every value is a variable, tensor constants
// are instructions, Python scalars travel out of band and a calling
// convention re-interleaves them with the tensors.
//
//===----------------------------------------------------------------------===//

#ifndef TRACEIR_DIALECT_TRACEDIALECT_TD
#define TRACEIR_DIALECT_TRACEDIALECT_TD

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"

def Trace_Dialect : Dialect {
  let name = "trace";
  let cppNamespace = "::mlir::trace";
  let summary = "Traced neural-network graphs in ANF form";
  let description = [{
    A `trace.graph` is a closed graph: its arguments are the model's
    parameters (`trace.param = "name"`) and inputs (`trace.input = "name"`,
    optionally `trace.donated`), its body is a flat list of `trace.constant`,
    `trace.pyop` and `trace.free` instructions, and `trace.ret` tuples up the
    results. Python scalars of a `trace.pyop` live in its `scalars` attribute;
    `cconv` says how they interleave with the tensor operands.
  }];
  let useDefaultAttributePrinterParser = 1;
  let hasConstantMaterializer = 0;
  let extraClassDeclaration = [{
    /// Names of the argument attributes a graph understands.
    static constexpr ::llvm::StringLiteral kParamAttrName = "trace.param";
    static constexpr ::llvm::StringLiteral kInputAttrName = "trace.input";
    static constexpr ::llvm::StringLiteral kDonatedAttrName = "trace.donated";
    /// The memory plan (--plan-memory): the arena's bytes and alignment on
    /// the trace.graph, and on each trace.pyop with planned results one
    /// offset per result (-1: not in the arena).
    static constexpr ::llvm::StringLiteral kArenaBytesAttrName =
        "trace.arena_bytes";
    static constexpr ::llvm::StringLiteral kArenaAlignmentAttrName =
        "trace.arena_alignment";
    static constexpr ::llvm::StringLiteral kArenaOffsetsAttrName =
        "trace.arena_offsets";

    ::mlir::LogicalResult verifyRegionArgAttribute(::mlir::Operation *op,
        unsigned regionIndex, unsigned argIndex,
        ::mlir::NamedAttribute attribute) override;
    ::mlir::LogicalResult verifyOperationAttribute(::mlir::Operation *op,
        ::mlir::NamedAttribute attribute) override;

    /// The registry entry of a PyOp name, or null. One pointer-keyed
    /// lookup: verifiers and analyses call it for every op.
    const ::mlir::trace::OpInfo *lookupOpInfo(::mlir::StringAttr name) const {
      return opInfos.lookup(name);
    }

  private:
    void registerAttributes();
    /// Built once in initialize(); read-only afterwards, so concurrent
    /// verifiers may share it.
    ::llvm::DenseMap<::mlir::StringAttr, const ::mlir::trace::OpInfo *> opInfos;
  }];
}

class Trace_Op<string mnemonic, list<Trait> traits = []>
    : Op<Trace_Dialect, mnemonic, traits>;

class Trace_Attr<string name, string attrMnemonic, list<Trait> traits = []>
    : AttrDef<Trace_Dialect, name, traits> {
  let mnemonic = attrMnemonic;
}

//===----------------------------------------------------------------------===//
// Python scalar attributes that have no builtin counterpart.
//===----------------------------------------------------------------------===//

def Trace_NoneAttr : Trace_Attr<"None", "none"> {
  let summary = "Python's None, as a scalar argument of a trace.pyop";
  let description = [{
    Example: the `max_norm` of `Embedding` is often None.

    ```mlir
    #trace.none
    ```
  }];
}

def Trace_ListAttr : Trace_Attr<"List", "list"> {
  let summary = "A Python list of scalars (tuples are builtin arrays)";
  let description = [{
    Python distinguishes `[1, 2]` from `(1, 2)`; tuples map to the builtin
    `ArrayAttr` and lists wrap one so both round-trip exactly.

    ```mlir
    #trace.list<[1, 2]>
    ```
  }];
  let parameters = (ins "::mlir::ArrayAttr":$elements);
  let assemblyFormat = "`<` $elements `>`";
}

#endif // TRACEIR_DIALECT_TRACEDIALECT_TD
