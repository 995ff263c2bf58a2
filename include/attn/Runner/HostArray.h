//===- HostArray.h - dense host arrays and .npy files -----------*- C++ -*-===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The buffers the runner passes to compiled functions: dense, row-major,
// typed by the C ABI's element kinds, readable from and writable to NumPy's
// `.npy` format so that any Python user can feed and read them.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_RUNNER_HOSTARRAY_H
#define ATTN_RUNNER_HOSTARRAY_H

#include "attn/Target/Cpu/CpuABI.h"
#include "llvm/Support/Error.h"

#include <cstdint>
#include <optional>
#include <vector>

namespace mlir {
namespace attn {

/// A dense row-major array in host memory.
class HostArray {
public:
  /// A zero-filled array of `shape` (non-negative sizes).
  HostArray(AbiElement element, ArrayRef<int64_t> shape);

  /// The element kind.
  AbiElement getElement() const { return element; }
  /// The dimensions, outermost first.
  ArrayRef<int64_t> getShape() const { return shape; }
  /// The product of the dimensions.
  int64_t getNumElements() const { return numElements; }
  /// The first element; elements are contiguous and row-major.
  void *getData() { return storage.data(); }
  const void *getData() const { return storage.data(); }
  /// Bytes of element storage (what a device copy of the array takes).
  size_t getByteSize() const {
    return numElements * getAbiElementSize(element);
  }

  /// Element `i` (row-major) as a double; halves and bf16 are decoded, i1
  /// reads 0 or 1.
  double get(int64_t i) const;
  /// Stores `value` into element `i`, rounded to nearest even for floats,
  /// truncated towards zero and saturated for integers.
  void set(int64_t i, double value);

  /// Element `i` of an integer or i1 array, exactly.
  int64_t getInt(int64_t i) const;
  /// Stores `value` into element `i` of an integer or i1 array, saturated
  /// to the element's range (i1: non-zero is 1).
  void setInt(int64_t i, int64_t value);

  /// Fills every element with NaN (floats) or a recognisable garbage
  /// pattern (integers), so that an output the callee never writes fails
  /// any comparison.
  void poison();

private:
  AbiElement element;
  SmallVector<int64_t> shape;
  int64_t numElements;
  /// 64-bit words keep every element kind aligned.
  std::vector<uint64_t> storage;
};

/// Reads a `.npy` file (format 1.0-3.0, little endian, C order) whose dtype
/// is one of bool, int8, int32, int64, float16, float32, float64, or uint16
/// (taken as raw bf16 bits).
llvm::Expected<HostArray> readNpy(StringRef path);

/// Writes `array` as `.npy`. bf16 is written as float32 (exact), since
/// NumPy has no bf16 dtype.
llvm::Error writeNpy(StringRef path, const HostArray &array);

/// `array` converted to `element` (same shape); floats round to nearest
/// even, integers convert exactly when they fit (see findUnrepresentable).
HostArray convertArray(const HostArray &array, AbiElement element);

/// For integer arrays converted to the integer kind `element`: the first
/// element whose value does not fit, or nullopt when all do (always for
/// other kinds).
std::optional<int64_t> findUnrepresentable(const HostArray &array,
                                           AbiElement element);

} // namespace attn
} // namespace mlir

#endif // ATTN_RUNNER_HOSTARRAY_H
