//===- HostArray.cpp - dense host arrays and .npy files -------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/HostArray.h"

#include "mlir/IR/BuiltinTypes.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

using namespace mlir;
using namespace mlir::attn;

//===----------------------------------------------------------------------===//
// Elements
//===----------------------------------------------------------------------===//

static const llvm::fltSemantics &getSemantics(AbiElement element) {
  return element == AbiElement::f16 ? llvm::APFloat::IEEEhalf()
                                    : llvm::APFloat::BFloat();
}

static double decodeHalf(AbiElement element, uint16_t bits) {
  return llvm::APFloat(getSemantics(element), llvm::APInt(16, bits))
      .convertToDouble();
}

static uint16_t encodeHalf(AbiElement element, double value) {
  llvm::APFloat f(value);
  bool losesInfo;
  f.convert(getSemantics(element), llvm::APFloat::rmNearestTiesToEven,
            &losesInfo);
  return static_cast<uint16_t>(f.bitcastToAPInt().getZExtValue());
}

HostArray::HostArray(AbiElement element, ArrayRef<int64_t> shape)
    : element(element), shape(shape) {
  numElements = 1;
  for (int64_t d : shape)
    numElements *= d;
  int64_t bytes = numElements * getAbiElementSize(element);
  storage.assign((bytes + 7) / 8, 0);
}

double HostArray::get(int64_t i) const {
  const char *p = reinterpret_cast<const char *>(storage.data());
  auto load = [&](auto witness) {
    decltype(witness) v;
    std::memcpy(&v, p + i * sizeof(v), sizeof(v));
    return v;
  };
  switch (element) {
  case AbiElement::f16:
  case AbiElement::bf16:
    return decodeHalf(element, load(uint16_t()));
  case AbiElement::f32:
    return load(float());
  case AbiElement::f64:
    return load(double());
  default:
    return static_cast<double>(getInt(i));
  }
  llvm_unreachable("covered switch");
}

/// The range of an integer element kind.
static std::pair<int64_t, int64_t> getRange(AbiElement element) {
  switch (element) {
  case AbiElement::i1:
    return {0, 1};
  case AbiElement::i8:
    return {INT8_MIN, INT8_MAX};
  case AbiElement::i32:
    return {INT32_MIN, INT32_MAX};
  default:
    return {INT64_MIN, INT64_MAX};
  }
}

void HostArray::set(int64_t i, double value) {
  char *p = reinterpret_cast<char *>(storage.data());
  auto store = [&](auto v) { std::memcpy(p + i * sizeof(v), &v, sizeof(v)); };
  switch (element) {
  case AbiElement::f16:
  case AbiElement::bf16:
    return store(encodeHalf(element, value));
  case AbiElement::f32:
    return store(static_cast<float>(value));
  case AbiElement::f64:
    return store(value);
  default: {
    // Saturate in double first: casting an out-of-range double is UB.
    auto [lo, hi] = getRange(element);
    if (std::isnan(value))
      return setInt(i, 0);
    if (element == AbiElement::i1)
      return setInt(i, value != 0);
    if (value <= static_cast<double>(lo))
      return setInt(i, lo);
    if (value >= static_cast<double>(hi))
      return setInt(i, hi);
    return setInt(i, static_cast<int64_t>(value));
  }
  }
}

int64_t HostArray::getInt(int64_t i) const {
  const char *p = reinterpret_cast<const char *>(storage.data());
  auto load = [&](auto witness) {
    decltype(witness) v;
    std::memcpy(&v, p + i * sizeof(v), sizeof(v));
    return static_cast<int64_t>(v);
  };
  switch (element) {
  case AbiElement::i1:
    return load(uint8_t()) != 0;
  case AbiElement::i8:
    return load(int8_t());
  case AbiElement::i32:
    return load(int32_t());
  case AbiElement::i64:
  case AbiElement::index:
    return load(int64_t());
  default: {
    // Saturating, as casting an out-of-range double is UB.
    double v = get(i);
    return std::isnan(v) ? 0
                         : static_cast<int64_t>(std::clamp(v, -9.2e18, 9.2e18));
  }
  }
}

void HostArray::setInt(int64_t i, int64_t value) {
  char *p = reinterpret_cast<char *>(storage.data());
  auto store = [&](auto v) { std::memcpy(p + i * sizeof(v), &v, sizeof(v)); };
  auto [lo, hi] = getRange(element);
  value = element == AbiElement::i1 ? value != 0
                                    : std::min(std::max(value, lo), hi);
  switch (element) {
  case AbiElement::i1:
    return store(static_cast<uint8_t>(value));
  case AbiElement::i8:
    return store(static_cast<int8_t>(value));
  case AbiElement::i32:
    return store(static_cast<int32_t>(value));
  case AbiElement::i64:
  case AbiElement::index:
    return store(value);
  default:
    return set(i, static_cast<double>(value));
  }
}

void HostArray::poison() {
  switch (element) {
  case AbiElement::f16:
  case AbiElement::bf16:
  case AbiElement::f32:
  case AbiElement::f64:
    for (int64_t i = 0; i < numElements; ++i)
      set(i, std::numeric_limits<double>::quiet_NaN());
    return;
  default:
    std::memset(storage.data(), 0xA5, storage.size() * sizeof(uint64_t));
  }
}

HostArray attn::convertArray(const HostArray &array, AbiElement element) {
  HostArray result(element, array.getShape());
  if (element == array.getElement()) {
    std::memcpy(result.getData(), array.getData(),
                array.getNumElements() * getAbiElementSize(element));
    return result;
  }
  bool exact = !isFloatElement(element) && !isFloatElement(array.getElement());
  for (int64_t i = 0, e = array.getNumElements(); i < e; ++i) {
    if (exact)
      result.setInt(i, array.getInt(i));
    else
      result.set(i, array.get(i));
  }
  return result;
}

std::optional<int64_t> attn::findUnrepresentable(const HostArray &array,
                                                 AbiElement element) {
  if (isFloatElement(element) || isFloatElement(array.getElement()) ||
      element == AbiElement::i1)
    return std::nullopt;
  auto [lo, hi] = getRange(element);
  for (int64_t i = 0, e = array.getNumElements(); i < e; ++i) {
    int64_t v = array.getInt(i);
    if (v < lo || v > hi)
      return i;
  }
  return std::nullopt;
}

//===----------------------------------------------------------------------===//
// .npy
//===----------------------------------------------------------------------===//

/// NumPy's spelling of each element kind (bf16 is written as f32).
static StringRef getNpyDescr(AbiElement element) {
  switch (element) {
  case AbiElement::f16:
    return "<f2";
  case AbiElement::bf16:
  case AbiElement::f32:
    return "<f4";
  case AbiElement::f64:
    return "<f8";
  case AbiElement::i1:
    return "|b1";
  case AbiElement::i8:
    return "|i1";
  case AbiElement::i32:
    return "<i4";
  case AbiElement::i64:
  case AbiElement::index:
    return "<i8";
  }
  llvm_unreachable("covered switch");
}

static std::optional<AbiElement> parseNpyDescr(StringRef descr) {
  return llvm::StringSwitch<std::optional<AbiElement>>(descr)
      .Case("<f2", AbiElement::f16)
      .Case("<f4", AbiElement::f32)
      .Case("<f8", AbiElement::f64)
      .Case("|b1", AbiElement::i1)
      .Case("|i1", AbiElement::i8)
      .Case("<i4", AbiElement::i32)
      .Case("<i8", AbiElement::i64)
      .Case("<u2", AbiElement::bf16)
      .Default(std::nullopt);
}

/// The value of `'key': value` in a .npy header dictionary.
static StringRef findHeaderValue(StringRef header, StringRef key) {
  size_t at = header.find(("'" + key + "'").str());
  if (at == StringRef::npos)
    return {};
  StringRef rest = header.drop_front(at + key.size() + 2).ltrim(" :");
  if (rest.starts_with("'"))
    return rest.drop_front().take_until([](char c) { return c == '\''; });
  if (rest.starts_with("("))
    return rest.drop_front().take_until([](char c) { return c == ')'; });
  return rest.take_until([](char c) { return c == ',' || c == '}'; }).trim();
}

llvm::Expected<HostArray> attn::readNpy(StringRef path) {
  auto fail = [&](const Twine &why) {
    return llvm::createStringError(path + ": " + why);
  };
  auto file = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                          /*RequiresNullTerminator=*/false);
  if (!file)
    return fail(file.getError().message());
  StringRef bytes = (*file)->getBuffer();
  if (!bytes.starts_with("\x93NUMPY") || bytes.size() < 10)
    return fail("not a .npy file (no \\x93NUMPY magic)");
  unsigned major = static_cast<uint8_t>(bytes[6]);
  size_t headerLen, headerStart;
  if (major == 1) {
    headerLen =
        static_cast<uint8_t>(bytes[8]) | (static_cast<uint8_t>(bytes[9]) << 8);
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12)
      return fail("truncated header");
    headerLen = 0;
    for (int k = 3; k >= 0; --k)
      headerLen = (headerLen << 8) | static_cast<uint8_t>(bytes[8 + k]);
    headerStart = 12;
  } else {
    return fail("unsupported .npy format version " + Twine(major));
  }
  if (bytes.size() < headerStart + headerLen)
    return fail("truncated header");
  StringRef header = bytes.substr(headerStart, headerLen);

  StringRef descr = findHeaderValue(header, "descr");
  std::optional<AbiElement> element = parseNpyDescr(descr);
  if (!element)
    return fail("dtype '" + descr +
                "' is not supported (bool, int8, int32, int64, float16, "
                "float32, float64, or uint16 for bf16 bits)");
  if (findHeaderValue(header, "fortran_order") != "False")
    return fail("Fortran-ordered arrays are not supported; save a C-ordered "
                "copy (numpy.ascontiguousarray)");
  // The size the header promises is checked against the bytes present
  // before anything is allocated (with overflow-checked arithmetic).
  SmallVector<int64_t> shape;
  SmallVector<StringRef> dims;
  findHeaderValue(header, "shape").split(dims, ',', -1, /*KeepEmpty=*/false);
  uint64_t dataBytes = getAbiElementSize(*element);
  uint64_t available = bytes.size() - headerStart - headerLen;
  for (StringRef dim : dims) {
    int64_t size;
    if (dim.trim().getAsInteger(10, size) || size < 0)
      return fail("malformed shape in header: " + header);
    shape.push_back(size);
    if (size != 0 && dataBytes > available / static_cast<uint64_t>(size))
      dataBytes = available + 1; // More than the file holds, or overflow.
    else
      dataBytes *= size;
  }
  if (available < dataBytes)
    return fail("holds " + Twine(available) +
                " data bytes, fewer than its header's shape (" +
                formatShape(shape) + ") needs");

  HostArray array(*element, shape);
  std::memcpy(array.getData(), bytes.data() + headerStart + headerLen,
              array.getNumElements() * getAbiElementSize(*element));
  return array;
}

llvm::Error attn::writeNpy(StringRef path, const HostArray &array) {
  std::optional<HostArray> widened;
  if (array.getElement() == AbiElement::bf16)
    widened = convertArray(array, AbiElement::f32);
  const HostArray &out = widened ? *widened : array;

  // The shape as a Python tuple: (), (n,) or (a, b, ...).
  std::string dims;
  for (auto [i, d] : llvm::enumerate(array.getShape()))
    dims += (i ? ", " : "") + std::to_string(d);
  if (array.getShape().size() == 1)
    dims += ",";
  std::string header = "{'descr': '" + getNpyDescr(array.getElement()).str() +
                       "', 'fortran_order': False, 'shape': (" + dims + "), }";
  // Pad with spaces so that the data starts at a multiple of 64 bytes.
  size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';

  std::error_code ec;
  llvm::raw_fd_ostream os(path, ec, llvm::sys::fs::OF_None);
  if (ec)
    return llvm::createStringError(path + ": " + ec.message());
  os << "\x93NUMPY" << char(1) << char(0) << char(header.size() & 0xff)
     << char(header.size() >> 8) << header;
  os.write(static_cast<const char *>(out.getData()),
           out.getNumElements() * getAbiElementSize(out.getElement()));
  return llvm::Error::success();
}
