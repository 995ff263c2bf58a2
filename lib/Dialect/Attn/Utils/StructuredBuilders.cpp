//===- StructuredBuilders.cpp - helpers for building linalg on tensors ----===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Dialect/Attn/Utils/StructuredBuilders.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"

using namespace mlir;

SmallVector<OpFoldResult> attn::getSizes(OpBuilder &b, Location loc,
                                         Value value, ArrayRef<int64_t> dims) {
  SmallVector<OpFoldResult> sizes;
  for (int64_t dim : dims)
    sizes.push_back(tensor::getMixedSize(b, loc, value, dim));
  return sizes;
}

SmallVector<OpFoldResult> attn::getSizes(OpBuilder &b, Location loc,
                                         Value value) {
  return tensor::getMixedSizes(b, loc, value);
}

Value attn::createFilledTensor(OpBuilder &b, Location loc,
                               ArrayRef<OpFoldResult> sizes, TypedAttr fill) {
  Value empty = tensor::EmptyOp::create(b, loc, sizes, fill.getType());
  Value scalar = arith::ConstantOp::create(b, loc, fill);
  return linalg::FillOp::create(b, loc, scalar, empty).getResult(0);
}

Value attn::createTranspose(OpBuilder &b, Location loc, Value input,
                            ArrayRef<int64_t> permutation) {
  SmallVector<OpFoldResult> sizes = getSizes(b, loc, input);
  SmallVector<OpFoldResult> permuted;
  for (int64_t dim : permutation)
    permuted.push_back(sizes[dim]);
  Value init = tensor::EmptyOp::create(
      b, loc, permuted, cast<ShapedType>(input.getType()).getElementType());
  return linalg::TransposeOp::create(b, loc, input, init, permutation)
      .getResult()[0];
}

Value attn::buildPageIndex(OpBuilder &b, Location loc, Value pages, Value table,
                           Value batch, Value slot) {
  Value entry =
      tensor::ExtractOp::create(b, loc, table, ValueRange{batch, slot});
  Value page = arith::IndexCastOp::create(b, loc, b.getIndexType(), entry);
  Value lastPage =
      arith::SubIOp::create(b, loc, tensor::DimOp::create(b, loc, pages, 0),
                            arith::ConstantIndexOp::create(b, loc, 1));
  return arith::MinSIOp::create(
      b, loc,
      arith::MaxSIOp::create(b, loc, page,
                             arith::ConstantIndexOp::create(b, loc, 0)),
      lastPage);
}

attn::SequenceBounds attn::buildSequenceBounds(OpBuilder &b, Location loc,
                                               Value offsets, Value batch,
                                               Value rows, Value padded,
                                               bool alignEnd) {
  Value zero = arith::ConstantIndexOp::create(b, loc, 0);
  auto offsetAt = [&](Value index) -> Value {
    Value entry = tensor::ExtractOp::create(b, loc, offsets, index);
    return arith::IndexCastOp::create(b, loc, b.getIndexType(), entry);
  };
  auto clamp = [&](Value v, Value lo, Value hi) -> Value {
    return arith::MinSIOp::create(b, loc, arith::MaxSIOp::create(b, loc, v, lo),
                                  hi);
  };
  Value next = arith::AddIOp::create(b, loc, batch,
                                     arith::ConstantIndexOp::create(b, loc, 1));
  Value start = offsetAt(batch), end = offsetAt(next);
  if (rows) {
    start = clamp(start, zero, rows);
    end = clamp(end, start, rows);
  } else {
    start = arith::MaxSIOp::create(b, loc, start, zero);
    end = arith::MaxSIOp::create(b, loc, end, start);
  }
  Value length = arith::MinSIOp::create(
      b, loc, arith::SubIOp::create(b, loc, end, start), padded);
  Value paddedStart =
      alignEnd ? arith::SubIOp::create(b, loc, padded, length).getResult()
               : zero;
  return {start, length, paddedStart};
}

Type attn::getAccumulatorType(Type element) {
  if (element.isF64())
    return element;
  return Float32Type::get(element.getContext());
}

Value attn::castFloat(OpBuilder &b, Location loc, Value v, Type type) {
  Type from = v.getType();
  if (from == type)
    return v;
  unsigned fromWidth = from.getIntOrFloatBitWidth();
  if (type.getIntOrFloatBitWidth() == fromWidth) // f16 <-> bf16, via f32.
    v = arith::ExtFOp::create(b, loc, b.getF32Type(), v);
  if (type.getIntOrFloatBitWidth() > v.getType().getIntOrFloatBitWidth())
    return arith::ExtFOp::create(b, loc, type, v);
  return arith::TruncFOp::create(b, loc, type, v);
}

void attn::buildMulAccBody(OpBuilder &b, Location loc, ValueRange args) {
  Type acc = args[2].getType();
  Value prod = arith::MulFOp::create(b, loc, castFloat(b, loc, args[0], acc),
                                     castFloat(b, loc, args[1], acc));
  linalg::YieldOp::create(
      b, loc, arith::AddFOp::create(b, loc, args[2], prod).getResult());
}

Value attn::createElementCast(OpBuilder &b, Location loc, Value input,
                              Type elementType, Value factor) {
  auto type = cast<RankedTensorType>(input.getType());
  if (type.getElementType() == elementType && !factor)
    return input;
  Value init =
      tensor::EmptyOp::create(b, loc, getSizes(b, loc, input), elementType);
  AffineMap id = b.getMultiDimIdentityMap(type.getRank());
  return linalg::GenericOp::create(
             b, loc, init.getType(), input, init, {id, id},
             SmallVector<utils::IteratorType>(type.getRank(),
                                              utils::IteratorType::parallel),
             [&](OpBuilder &nb, Location nl, ValueRange args) {
               Value v = castFloat(nb, nl, args[0], elementType);
               if (factor)
                 v = arith::MulFOp::create(nb, nl, v, factor);
               linalg::YieldOp::create(nb, nl, v);
             })
      .getResult(0);
}
