//===- ValueChecker.cpp - the entry checks of integer buffers -------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The loops attn-check-abi builds at a function's entry over its integer
// buffers (ValueChecker.h): lengths within the keys, page table entries
// among the cache's pages, appended rows within their table row and no
// page written by two sequences. Each records its first failure; none
// reads anything once an earlier check failed.
//
//===----------------------------------------------------------------------===//

#include "ValueChecker.h"

#include "mlir/Dialect/MemRef/IR/MemRef.h"
#include "mlir/Dialect/SCF/IR/SCF.h"

using namespace mlir;
using namespace mlir::attn;

namespace {

/// The search for the first element outside its bounds that a loop
/// carries: (whether one was found, its index, its value), as i1, i64, i64.
struct FirstOutside {
  static SmallVector<Value> start(OpBuilder &b, Location loc) {
    Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
    return {arith::ConstantIntOp::create(b, loc, 0, 1), zero, zero};
  }
  /// `found` updated with `element` (i64) at `index` (index) where
  /// `outside` holds and nothing was found before.
  static SmallVector<Value> update(OpBuilder &b, Location loc, ValueRange found,
                                   Value outside, Value index, Value element) {
    Value first = arith::AndIOp::create(
        b, loc, outside,
        arith::XOrIOp::create(b, loc, found[0],
                              arith::ConstantIntOp::create(b, loc, 1, 1)));
    Value position = arith::IndexCastOp::create(b, loc, b.getI64Type(), index);
    return {arith::OrIOp::create(b, loc, found[0], outside),
            arith::SelectOp::create(b, loc, first, position, found[1]),
            arith::SelectOp::create(b, loc, first, element, found[2])};
  }
};

/// Element `indices` of the integer buffer `buffer`, as i64.
Value loadI64(OpBuilder &b, Location loc, Value buffer, ValueRange indices) {
  Value element = memref::LoadOp::create(b, loc, buffer, indices);
  if (element.getType() == b.getI64Type())
    return element;
  return arith::ExtSIOp::create(b, loc, b.getI64Type(), element);
}

/// Whether `element` (i64) lies outside [`low`, `high`].
Value isOutside(OpBuilder &b, Location loc, Value element, Value low,
                Value high) {
  return arith::OrIOp::create(
      b, loc,
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::slt, element, low),
      arith::CmpIOp::create(b, loc, arith::CmpIPredicate::sgt, element, high));
}

} // namespace

SmallVector<Value> ValueChecker::forEachEntry(
    Value rows, function_ref<Range(OpBuilder &, Location, Value)> range,
    ValueRange inits,
    function_ref<SmallVector<Value>(OpBuilder &, Location, Value, Value,
                                    ValueRange)>
        body) {
  Value one = index(1);
  auto loop = scf::ForOp::create(
      b, loc, index(0), rows, one, inits,
      [&](OpBuilder &rb, Location rl, Value r, ValueRange rowCarried) {
        auto [begin, end] = range(rb, rl, r);
        auto entries = scf::ForOp::create(
            rb, rl, begin, end, one, rowCarried,
            [&](OpBuilder &eb, Location el, Value j, ValueRange carried) {
              scf::YieldOp::create(eb, el, body(eb, el, r, j, carried));
            });
        scf::YieldOp::create(rb, rl, entries.getResults());
      });
  return loop.getResults();
}

ValueChecker::Range ValueChecker::entriesOf(OpBuilder &nb, Location nl,
                                            Value start, Value count,
                                            Value pageSize, Value width) {
  Value first = arith::MinSIOp::create(
      nb, nl, arith::DivSIOp::create(nb, nl, start, pageSize), width);
  Value last = arith::MinSIOp::create(
      nb, nl,
      arith::CeilDivSIOp::create(
          nb, nl, arith::AddIOp::create(nb, nl, start, count), pageSize),
      width);
  // ceil(start / P) > start / P where start is inside a page.
  Value none = arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::sle, count,
                                     arith::ConstantIndexOp::create(nb, nl, 0));
  return {first, arith::SelectOp::create(nb, nl, none, first, last)};
}

void ValueChecker::checkElements(Value argument, Value values, Value count,
                                 Value low, Value high, AbiMismatch kind) {
  auto loop = scf::ForOp::create(
      b, loc, index(0), tripCount(count), index(1), FirstOutside::start(b, loc),
      [&](OpBuilder &lb, Location l, Value i, ValueRange found) {
        Value element = loadI64(lb, l, values, i);
        scf::YieldOp::create(
            lb, l,
            FirstOutside::update(lb, l, found,
                                 isOutside(lb, l, element, low, high), i,
                                 element));
      });
  mismatch.check(
      b, loc, loop.getResult(0),
      {argument, loop.getResult(1),
       arith::ConstantIntOp::create(b, loc, static_cast<int64_t>(kind), 64),
       high, loop.getResult(2)});
}

void ValueChecker::checkPages(Value argument, Value table, Value rows,
                              Value width, Value lengths, Value numPages,
                              Value pageSize) {
  Value size = arith::MaxSIOp::create(b, loc, pageSize, index(1));
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
  Value last = i64(arith::SubIOp::create(b, loc, numPages, index(1)));
  SmallVector<Value> found = forEachEntry(
      tripCount(rows),
      [&](OpBuilder &nb, Location nl, Value r) -> Range {
        // The row's pages of keys: those of positions [0, length).
        Value length = arith::IndexCastOp::create(
            nb, nl, nb.getIndexType(),
            arith::MaxSIOp::create(nb, nl, loadI64(nb, nl, lengths, r), zero));
        return entriesOf(nb, nl, index(0), length, size, width);
      },
      FirstOutside::start(b, loc),
      [&](OpBuilder &nb, Location nl, Value r, Value j, ValueRange carried) {
        Value entry = loadI64(nb, nl, table, ValueRange{r, j});
        Value flat = arith::AddIOp::create(
            nb, nl, arith::MulIOp::create(nb, nl, r, width), j);
        return FirstOutside::update(
            nb, nl, carried, isOutside(nb, nl, entry, zero, last), flat, entry);
      });
  mismatch.check(b, loc, found[0],
                 {argument, found[1],
                  arith::ConstantIntOp::create(
                      b, loc, static_cast<int64_t>(AbiMismatch::Page), 64),
                  i64(numPages), found[2]});
}

void ValueChecker::checkPageWrites(Value tableArgument, Value positionsArgument,
                                   Value table, Value rows, Value width,
                                   Value positions, Value numPages,
                                   Value pageSize, Value newRows) {
  Value size = arith::MaxSIOp::create(b, loc, pageSize, index(1));
  Value zero = arith::ConstantIntOp::create(b, loc, 0, 64);
  // The last position the new rows fit after (negative: none).
  Value lastStart = i64(arith::SubIOp::create(
      b, loc, arith::MulIOp::create(b, loc, width, pageSize), newRows));
  checkElements(positionsArgument, positions, rows, zero, lastStart,
                AbiMismatch::Position);
  // Positions are in range from here on (or the loops do not run).
  auto written = [&](OpBuilder &nb, Location nl, Value r) -> Range {
    Value start = arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                             loadI64(nb, nl, positions, r));
    return entriesOf(nb, nl, start, newRows, size, width);
  };
  Value lastPage = i64(arith::SubIOp::create(b, loc, numPages, index(1)));
  SmallVector<Value> outside = forEachEntry(
      tripCount(rows), written, FirstOutside::start(b, loc),
      [&](OpBuilder &nb, Location nl, Value r, Value j, ValueRange carried) {
        Value entry = loadI64(nb, nl, table, ValueRange{r, j});
        Value flat = arith::AddIOp::create(
            nb, nl, arith::MulIOp::create(nb, nl, r, width), j);
        return FirstOutside::update(nb, nl, carried,
                                    isOutside(nb, nl, entry, zero, lastPage),
                                    flat, entry);
      });
  mismatch.check(b, loc, outside[0],
                 {tableArgument, outside[1],
                  arith::ConstantIntOp::create(
                      b, loc, static_cast<int64_t>(AbiMismatch::Page), 64),
                  i64(numPages), outside[2]});
  // Pages written by two sequences: each written page's writer, in a
  // scratch array over the pages, set only where written (first to -1, then
  // to the sequence), so that a call costs the pages it writes, not the
  // cache's.
  Value pages = tripCount(numPages);
  Value owners = memref::AllocOp::create(
      b, loc, MemRefType::get({ShapedType::kDynamic}, b.getI64Type()),
      ValueRange{pages});
  Value none = arith::ConstantIntOp::create(b, loc, -1, 64);
  auto pageOf = [&](OpBuilder &nb, Location nl, Value r, Value j) {
    return arith::IndexCastOp::create(nb, nl, nb.getIndexType(),
                                      loadI64(nb, nl, table, ValueRange{r, j}));
  };
  forEachEntry(tripCount(rows), written, {},
               [&](OpBuilder &nb, Location nl, Value r, Value j, ValueRange) {
                 memref::StoreOp::create(nb, nl, none, owners,
                                         ValueRange{pageOf(nb, nl, r, j)});
                 return SmallVector<Value>{};
               });
  Value no = arith::ConstantIntOp::create(b, loc, 0, 1);
  SmallVector<Value> shared = forEachEntry(
      tripCount(rows), written, {no, zero, zero, zero},
      [&](OpBuilder &nb, Location nl, Value r, Value j, ValueRange found) {
        Value page = pageOf(nb, nl, r, j);
        Value sequence = arith::IndexCastOp::create(nb, nl, nb.getI64Type(), r);
        Value owner = memref::LoadOp::create(nb, nl, owners, ValueRange{page});
        Value other = arith::AndIOp::create(
            nb, nl,
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne, owner,
                                  none),
            arith::CmpIOp::create(nb, nl, arith::CmpIPredicate::ne, owner,
                                  sequence));
        memref::StoreOp::create(nb, nl, sequence, owners, ValueRange{page});
        Value first = arith::AndIOp::create(
            nb, nl, other,
            arith::XOrIOp::create(nb, nl, found[0],
                                  arith::ConstantIntOp::create(nb, nl, 1, 1)));
        auto pick = [&](Value value, Value previous) -> Value {
          return arith::SelectOp::create(nb, nl, first, value, previous);
        };
        return SmallVector<Value>{
            arith::OrIOp::create(nb, nl, found[0], other),
            pick(sequence, found[1]), pick(owner, found[2]),
            pick(arith::IndexCastOp::create(nb, nl, nb.getI64Type(), page),
                 found[3])};
      });
  memref::DeallocOp::create(b, loc, owners);
  mismatch.check(
      b, loc, shared[0],
      {tableArgument, shared[1],
       arith::ConstantIntOp::create(
           b, loc, static_cast<int64_t>(AbiMismatch::SharedPage), 64),
       shared[2], shared[3]});
}
