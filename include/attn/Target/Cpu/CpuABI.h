//===- CpuABI.h - the C ABI of compiled attn functions ----------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// What a public function of an attn module looks like to C once the CPU
// pipeline has compiled it (docs/CpuABI.md): every tensor argument becomes a
// pointer to a memref descriptor, every tensor result a caller-allocated out
// parameter appended after the inputs, scalars are passed by value. The
// description is computed from the tensor-level signature, so the header
// generator and the runner agree with the pipeline by construction.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TARGET_CPU_CPUABI_H
#define ATTN_TARGET_CPU_CPUABI_H

#include "attn/Dialect/Attn/IR/AttnOps.h"

#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinOps.h"
#include "llvm/Support/raw_ostream.h"

#include <optional>
#include <string>

namespace mlir {
namespace attn {

/// The element types the ABI knows, with their C spelling and size.
enum class AbiElement { f16, bf16, f32, f64, i1, i8, i32, i64, index };

/// One parameter of the C function.
struct AbiParam {
  AbiElement element;
  /// Shape of a buffer parameter (ShapedType::kDynamic for `?`); empty and
  /// `isBuffer == false` for a scalar passed by value.
  SmallVector<int64_t> shape;
  bool isBuffer = true;
  /// Whether the callee writes it (a result turned out parameter).
  bool isOutput = false;
  /// Whether it is an input the callee may write: a memref argument, a
  /// destination the caller lends (the function stores a result in it with
  /// bufferization.materialize_in_destination; docs/CpuABI.md,
  /// "Destinations"). It must overlap no other buffer of the call.
  bool isDestination = false;
  /// Whether the buffer may be a strided view: its innermost dimension
  /// contiguous (stride 1), every other stride and the offset whatever
  /// the caller passes. An input whose tensor carries
  /// `bufferization.buffer_layout = strided<[?, ..., ?, 1], offset: ?>`,
  /// or a destination of that layout; every other buffer is dense
  /// row-major.
  bool rowStrided = false;

  /// The number of dimensions (0 for scalars and rank-0 buffers).
  int64_t getRank() const { return shape.size(); }
  /// Whether every dimension is known at compile time.
  bool hasStaticShape() const;
  /// Whether a buffer of `sizes` can be passed: same rank, and equal sizes
  /// where the type's dimension is static.
  bool accepts(ArrayRef<int64_t> sizes) const;
};

/// How the compiled code takes a dynamic dimension of a buffer parameter to
/// relate to another parameter's dimension or a constant size.
enum class AbiSizeRelationKind : int64_t {
  /// The same size: the key lengths of key and value, a mask's `?` and the
  /// query's rows, an output and what the function computes it from.
  Equal = 0,
  /// A multiple of the other, which is positive: query heads of key/value
  /// heads (grouped-query attention).
  MultipleOf = 1,
  /// A positive divisor of the other: key/value heads of query heads.
  Divides = 2
};

/// A relation of sizes the caller's buffers must keep
/// (getAbiSizeRelations).
struct AbiSizeRelation {
  unsigned param;
  int64_t dimension;
  /// The other parameter, or -1 when `otherDimension` is a constant size.
  int64_t otherParam;
  int64_t otherDimension;
  AbiSizeRelationKind kind = AbiSizeRelationKind::Equal;

  bool isConstant() const { return otherParam < 0; }
  /// Whether `size` and `other` keep it.
  bool holds(int64_t size, int64_t other) const;
};

/// A size as the caller gives it: dimension `dim` of parameter `param`, or
/// the constant `dim` when `param` is -1.
struct AbiSize {
  int64_t param, dim;

  bool isConstant() const { return param < 0; }
  bool operator==(const AbiSize &other) const {
    return param == other.param && dim == other.dim;
  }
};

/// What the compiled code reads from the values of integer parameters and
/// must hold there (attn::getValueChecks, with the tensors traced to the
/// parameters and the extents to their sizes or constants): checked at
/// entry by loops over those values, after every size.
struct AbiValueCheck {
  attn::ValueCheckKind kind;
  /// The parameters whose values are read (attn::ValueCheck::values).
  SmallVector<int64_t, 2> params;
  /// The extents they are compared with (attn::ValueCheck::sizes).
  SmallVector<AbiSize, 3> sizes;

  /// How many parameters and sizes a check of `kind` has.
  static std::pair<unsigned, unsigned> getArity(attn::ValueCheckKind kind);
};

/// The C view of one public function.
struct FunctionAbi {
  std::string name;
  /// Inputs in argument order, then one output per result.
  SmallVector<AbiParam> params;
  unsigned numInputs = 0;
  /// Sizes the caller's buffers must agree on.
  SmallVector<AbiSizeRelation> sizeRelations;
  /// What the values of its integer buffers must hold (few functions have
  /// any: no inline storage).
  SmallVector<AbiValueCheck, 0> valueChecks;

  /// What the first relation that buffers of `shapes` (one per parameter,
  /// in order; the parameters accept them) break means
  /// (describeBrokenRelation), or nothing when they keep every relation.
  std::optional<std::string>
  checkSizeRelations(ArrayRef<SmallVector<int64_t>> shapes) const;
  /// What `relation`, broken by `size` and `otherSize`, means, with the
  /// parameters' names and types: "input #3 (tensor<2x?xf32>): dimension 1
  /// has size 5, input #1 (tensor<2x?xf32>) dimension 1 has 7; the function
  /// needs them equal".
  std::string describeBrokenRelation(const AbiSizeRelation &relation,
                                     int64_t size, int64_t otherSize) const;

  /// The exported symbol taking memref descriptors.
  std::string getCInterfaceSymbol() const { return "_mlir_ciface_" + name; }
};

/// The ABI element of `type`, or failure for a type the ABI cannot pass.
FailureOr<AbiElement> getAbiElement(Type type);

/// Name of the element in MLIR syntax (`f32`, `i1`, ...).
StringRef stringifyAbiElement(AbiElement element);

/// Size in bytes of one element as stored in a buffer (i1 takes a byte).
int64_t getAbiElementSize(AbiElement element);

/// Whether `element` is a floating-point kind.
bool isFloatElement(AbiElement element);

/// `1x?x64`-style spelling of a shape (`?` for dynamic dimensions).
std::string formatShape(ArrayRef<int64_t> shape);

/// `tensor<1x?x64xf32>`-style spelling of a buffer type.
std::string formatTensorType(ArrayRef<int64_t> shape, AbiElement element);

/// The argument attribute that makes an input a strided view (one-shot
/// bufferization's own: it gives the argument that layout).
constexpr llvm::StringLiteral kBufferLayoutAttr = "bufferization.buffer_layout";

/// The ABI of `func`, a public function with a body; emits an error at the
/// offending argument or result and fails if some type cannot cross the C
/// boundary (an unranked tensor, a vector, ...).
FailureOr<FunctionAbi> getFunctionAbi(func::FuncOp func);

/// The relations of sizes a call of `func` (a function on tensors, before
/// bufferization) must keep, with its inputs numbered first and its results
/// after them
/// (`numInputs` of them): what the attn ops' lowerings assume
/// (attn::getSizeRelations) and the loops of linalg ops take from one
/// operand for all, in the function's entry block, and each dynamic
/// dimension of a result, each traced back to a dimension of a parameter or
/// a constant (through casts, destinations, tensor.empty, tensor.dim and
/// expand_shape). Sizes computed otherwise (products, quotients) are not
/// listed: nothing checks them.
SmallVector<AbiSizeRelation> getAbiSizeRelations(func::FuncOp func);

/// The attribute attn-record-abi-sizes puts the relations of a public
/// function in for attn-check-abi: a flat i64 array of (param, dimension,
/// otherParam, otherDimension, kind) tuples.
constexpr llvm::StringLiteral kSizeRelationsAttr = "attn.abi_size_relations";

/// The value checks a call of `func` (a function on tensors, before
/// bufferization) must pass: attn::getValueChecks of the ops in its entry
/// block whose integer tensors are parameters as given (through casts) and
/// whose extents trace to parameters' sizes or constants. Others are not
/// listed: nothing checks them.
SmallVector<AbiValueCheck> getAbiValueChecks(func::FuncOp func);

/// The attribute attn-record-abi-sizes puts the value checks of a public
/// function in for attn-check-abi: an array of i64 arrays, one per check:
/// (kind, its parameters, then (param, dimension) per size, param -1 for a
/// constant).
constexpr llvm::StringLiteral kValueChecksAttr = "attn.abi_value_checks";

/// The ABI of every public function defined in `module`, in order; fails
/// (with diagnostics) if one cannot be described or there is none.
FailureOr<SmallVector<FunctionAbi>> getModuleAbi(ModuleOp module);

/// The function compiled CPU code exports (attn-check-abi) to say why a
/// call refused its buffers: `int attn_abi_error(int64_t info[5])`, info =
/// (argument, dimension, kind, expected, actual).
constexpr llvm::StringLiteral kAbiErrorFunction = "attn_abi_error";

/// The kinds of mismatch attn_abi_error reports.
/// `Relation`: the size `actual` of (argument, dimension) breaks one of
/// the function's size relations, whose other side is `expected`.
/// `Value`: element `dimension` of the argument holds `actual`, outside
/// [0, `expected`] (LengthsWithin).
/// `Page`: element `dimension` (row-major) of the argument, a block table,
/// names page `actual` for keys the function reads or writes, outside [0,
/// `expected`), the pages of the cache (PagesWithin, PageWrites).
/// `Position`: element `dimension` of the argument, where a sequence's new
/// rows start, is `actual`, outside [0, `expected`], the last start at
/// which they fit its row of the block table (PageWrites).
/// `SharedPage`: sequence `dimension` writes into page `actual`, which
/// sequence `expected` writes too; the argument is the block table
/// (PageWrites).
enum class AbiMismatch : int64_t {
  Size = 0,
  Stride = 1,
  Null = 2,
  Offset = 3,
  Relation = 4,
  Value = 5,
  Page = 6,
  Position = 7,
  SharedPage = 8
};

/// What `attn_abi_error` reported for a call of `abi` (its five fields:
/// argument, dimension, kind, expected, actual; docs/CpuABI.md), in words
/// with the numbers: "output #0 (tensor<4x8xf32>): dimension 1 has size 6,
/// the function was compiled for 8".
std::string describeAbiMismatch(const FunctionAbi &abi, ArrayRef<int64_t> info);

/// Writes a self-contained C header declaring every function of `abis`: the
/// descriptor structs, the `_mlir_ciface_` entry points and a plain-pointer
/// convenience wrapper `attn_<name>` for each. `guard` names the include
/// guard; `source` is quoted in the banner, which says, with
/// `deviceBuffers` (code compiled for CUDA), that pointers are device
/// memory. CPU entry points return their attn-check-abi status (0: ran, 1:
/// refused their buffers; `attn_abi_error` says why); CUDA ones return
/// nothing.
void emitCHeader(ArrayRef<FunctionAbi> abis, StringRef guard, StringRef source,
                 llvm::raw_ostream &os, bool deviceBuffers = false);

} // namespace attn
} // namespace mlir

#endif // ATTN_TARGET_CPU_CPUABI_H
