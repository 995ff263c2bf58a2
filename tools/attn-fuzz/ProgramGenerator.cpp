//===- ProgramGenerator.cpp - random valid attn programs from fuzz bytes --===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// The programs are written as text, the way users write them, so that the
// parser and the verifier are part of what is fuzzed. Every program is
// valid by construction: a verifier error on one is a bug of the
// generator or of the verifier, and the fuzzer reports it as such.
//
//===----------------------------------------------------------------------===//

#include "ProgramGenerator.h"

#include "mlir/Support/LLVM.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FormatVariadic.h"

#include <fuzzer/FuzzedDataProvider.h>

using namespace mlir;
using namespace mlir::attn;
using llvm::formatv;

namespace {

/// One extent of the problem: its run-time size and whether the function's
/// types spell it `?`.
struct Extent {
  int64_t size = 1;
  bool dynamic = false;
  /// Which extent of the problem this is: a dynamic one is read (tensor.dim)
  /// from an argument with the same id.
  int id = -1;
};

/// Sizes worth trying: 1, tile and vector multiples and their neighbours;
/// otherwise any size up to `max`.
int64_t pickSize(FuzzedDataProvider &data, int64_t max) {
  static const int64_t interesting[] = {1,  2,  3,  7,  8,  15, 16,  17,  31,
                                        32, 33, 48, 63, 64, 65, 127, 128, 129};
  if (data.ConsumeBool()) {
    int64_t size = interesting[data.ConsumeIntegralInRange<size_t>(
        0, std::size(interesting) - 1)];
    if (size <= max)
      return size;
  }
  return data.ConsumeIntegralInRange<int64_t>(1, max);
}

/// Extent number `id`, dynamic one time in four.
Extent pickExtent(FuzzedDataProvider &data, int64_t max, int id) {
  Extent extent;
  extent.size = pickSize(data, max);
  extent.dynamic = data.ConsumeIntegralInRange<int>(0, 3) == 0;
  extent.id = id;
  return extent;
}

std::string formatType(ArrayRef<Extent> dims, StringRef element) {
  std::string type = "tensor<";
  for (const Extent &dim : dims)
    type += (dim.dynamic ? std::string("?") : std::to_string(dim.size)) + "x";
  return type + element.str() + ">";
}

/// "1, 2, 3".
std::string joinIntegers(ArrayRef<int64_t> values) {
  return llvm::join(
      llvm::map_range(values, [](int64_t v) { return std::to_string(v); }),
      ", ");
}

SmallVector<int64_t> getSizes(ArrayRef<Extent> dims) {
  return llvm::to_vector(
      llvm::map_range(dims, [](const Extent &dim) { return dim.size; }));
}

/// Builds @main: its arguments (with their run-time shapes), its body, and
/// the values a dynamic extent is read from.
class FunctionWriter {
public:
  /// Adds an argument `%name` of `dims` x `element`; returns its name.
  std::string addArgument(StringRef name, ArrayRef<Extent> dims,
                          StringRef element) {
    std::string value = "%" + name.str();
    std::string type = formatType(dims, element);
    arguments.push_back(value + ": " + type);
    shapes.push_back(getSizes(dims));
    for (auto [i, dim] : llvm::enumerate(dims))
      if (dim.dynamic)
        sources.push_back({dim.id, value, type, static_cast<int64_t>(i)});
    return value;
  }

  /// Appends a line to the body.
  void line(const Twine &text) { body += "  " + text.str() + "\n"; }

  /// A fresh SSA name. The score_mod and mask_mod regions see the
  /// function's names (they are not isolated from above), so these take a
  /// form the regions' names never have: `%_<n><stem>`.
  std::string fresh(StringRef stem) {
    return "%_" + std::to_string(counter++) + stem.str();
  }

  /// `tensor.empty` of `dims` x `element`, its dynamic sizes read with
  /// tensor.dim from an argument that has them.
  std::string empty(ArrayRef<Extent> dims, StringRef element) {
    SmallVector<std::string> sizes;
    for (const Extent &dim : dims)
      if (dim.dynamic)
        sizes.push_back(readSize(dim.id));
    std::string result = fresh("init");
    line(formatv("{0} = tensor.empty({1}) : {2}", result,
                 llvm::join(sizes, ", "), formatType(dims, element)));
    return result;
  }

  std::string finish(ArrayRef<std::string> results,
                     ArrayRef<std::string> resultTypes) {
    return formatv("func.func @main({0}) -> ({1}) {{\n{2}  return {3} : "
                   "{1}\n}\n",
                   llvm::join(arguments, ", "), llvm::join(resultTypes, ", "),
                   body, llvm::join(results, ", "))
        .str();
  }

  SmallVector<SmallVector<int64_t>> shapes;

private:
  struct Source {
    int id;
    std::string value, type;
    int64_t dim;
  };

  std::string readSize(int id) {
    for (const Source &source : sources) {
      if (source.id != id)
        continue;
      std::string index = fresh("c"), size = fresh("dim");
      line(formatv("{0} = arith.constant {1} : index", index, source.dim));
      line(formatv("{0} = tensor.dim {1}, {2} : {3}", size, source.value, index,
                   source.type));
      return size;
    }
    // Every dynamic extent of a result is one of an argument.
    llvm_unreachable("dynamic extent that no argument has");
  }

  SmallVector<std::string> arguments;
  SmallVector<Source> sources;
  std::string body;
  unsigned counter = 0;
};

/// The parts of attn.sdpa / attn.weights / attn.sdpa_grad that describe
/// the scores, shared by the forward and the backward of one program.
struct ScoreClauses {
  std::string operands, attributes, regions;
};

/// The extents of a score problem. Extents that several operands share
/// are one object, so a dynamic one is `?` everywhere it appears.
struct ScoreProblem {
  Extent batch, qHeads, kvHeads, qLen, kvLen, headDim, valueDim;
  std::string element;
};

const char *const kElements[] = {"f32", "f16", "bf16", "f64"};

StringRef pickElement(FuzzedDataProvider &data) {
  return kElements[data.ConsumeIntegralInRange<size_t>(0, std::size(kElements) -
                                                              1)];
}

/// The score_mod bodies: a bias from the positions (ALiBi), a soft cap
/// (tanh), a head-dependent slope, a clamp. Each is differentiable by
/// RegionDerivative, so the backward can take it too.
std::string pickScoreMod(FuzzedDataProvider &data) {
  std::string header =
      "score_mod {\n  ^bb0(%s: f32, %b: index, %h: index, %i: index, %j: "
      "index):\n";
  switch (data.ConsumeIntegralInRange<int>(0, 3)) {
  case 0:
    return header + R"(    %d = arith.subi %j, %i : index
    %di = arith.index_cast %d : index to i64
    %df = arith.sitofp %di : i64 to f32
    %c = arith.constant 0.125 : f32
    %bias = arith.mulf %df, %c : f32
    %r = arith.addf %s, %bias : f32
    attn.yield %r : f32
  })";
  case 1:
    return header + R"(    %cap = arith.constant 5.0 : f32
    %x = arith.divf %s, %cap : f32
    %t = math.tanh %x : f32
    %r = arith.mulf %t, %cap : f32
    attn.yield %r : f32
  })";
  case 2:
    return header + R"(    %hi = arith.index_cast %h : index to i64
    %hf = arith.sitofp %hi : i64 to f32
    %c = arith.constant 0.25 : f32
    %one = arith.constant 1.0 : f32
    %m = arith.mulf %hf, %c : f32
    %slope = arith.addf %m, %one : f32
    %r = arith.mulf %s, %slope : f32
    attn.yield %r : f32
  })";
  default:
    return header + R"(    %lo = arith.constant -1.5 : f32
    %r = arith.maximumf %s, %lo : f32
    attn.yield %r : f32
  })";
  }
}

/// The mask_mod bodies: a prefix-LM band, every other key, a batch- and
/// head-dependent stripe, a dilated band with unsigned compares.
std::string pickMaskMod(FuzzedDataProvider &data) {
  std::string header =
      "mask_mod {\n  ^bb0(%b: index, %h: index, %i: index, %j: index):\n";
  int64_t constant = data.ConsumeIntegralInRange<int64_t>(0, 40);
  switch (data.ConsumeIntegralInRange<int>(0, 3)) {
  case 0:
    return header + formatv(R"(    %c = arith.constant {0} : index
    %prefix = arith.cmpi ult, %j, %c : index
    %past = arith.cmpi ule, %j, %i : index
    %keep = arith.ori %prefix, %past : i1
    attn.yield %keep : i1
  })",
                            constant)
                        .str();
  case 1:
    return header + R"(    %c2 = arith.constant 2 : index
    %r = arith.remui %j, %c2 : index
    %c0 = arith.constant 0 : index
    %keep = arith.cmpi eq, %r, %c0 : index
    attn.yield %keep : i1
  })";
  case 2:
    return header + R"(    %c3 = arith.constant 3 : index
    %bh = arith.addi %b, %h : index
    %s = arith.addi %bh, %j : index
    %r = arith.remui %s, %c3 : index
    %c0 = arith.constant 0 : index
    %keep = arith.cmpi ne, %r, %c0 : index
    attn.yield %keep : i1
  })";
  default:
    return header + formatv(R"(    %c = arith.constant {0} : index
    %i2 = arith.addi %i, %i : index
    %hi = arith.addi %i2, %c : index
    %keep = arith.cmpi ule, %j, %hi : index
    attn.yield %keep : i1
  })",
                            constant)
                        .str();
  }
}

/// Appends a dense literal of `shape` (nested brackets) with values in
/// [0, max] read from `data`.
void formatNested(FuzzedDataProvider &data, ArrayRef<int64_t> shape, int max,
                  std::string &os) {
  if (shape.empty()) {
    os += std::to_string(data.ConsumeIntegralInRange<int>(0, max));
    return;
  }
  os += "[";
  for (int64_t i = 0; i < shape.front(); ++i) {
    if (i)
      os += ", ";
    formatNested(data, shape.drop_front(), max, os);
  }
  os += "]";
}

/// Chooses masks, attributes and regions for `p`, adding the mask and
/// length arguments to `writer`. `summary` collects a description.
ScoreClauses pickScoreClauses(FuzzedDataProvider &data, ScoreProblem &p,
                              FunctionWriter &writer, std::string &summary) {
  ScoreClauses clauses;
  // Whether anything besides the block layout can hide a key.
  bool keepConditions = false;
  // block_classes' grid, when chosen: its values wait for the other keep
  // conditions.
  SmallVector<int64_t, 4> classesShape;

  // A mask of rank 1 to 4 whose extents are 1 or the full extent.
  if (int kind = data.ConsumeIntegralInRange<int>(0, 3); kind >= 2) {
    const Extent *full[4] = {&p.batch, &p.qHeads, &p.qLen, &p.kvLen};
    int rank = data.ConsumeIntegralInRange<int>(1, 4);
    SmallVector<Extent> dims;
    for (int d = 4 - rank; d < 4; ++d)
      dims.push_back(data.ConsumeBool() ? Extent{1, false} : *full[d]);
    StringRef element = kind == 2 ? "i1" : StringRef(p.element);
    std::string mask = writer.addArgument("mask", dims, element);
    clauses.operands +=
        formatv(" mask({0} : {1})", mask, formatType(dims, element)).str();
    keepConditions |= kind == 2;
    summary += formatv(" mask={0}:rank{1}", element, rank).str();
  }
  if (data.ConsumeIntegralInRange<int>(0, 3) == 0) {
    StringRef element = data.ConsumeBool() ? "i32" : "i64";
    Extent dims[] = {p.batch};
    std::string lens = writer.addArgument("lens", dims, element);
    clauses.operands +=
        formatv(" kv_lens({0} : {1})", lens, formatType(dims, element)).str();
    keepConditions = true;
    summary += " kv_lens";
  }

  // A block layout needs static sequence lengths: its constants' shapes
  // follow the block grid.
  std::string blockSize;
  if (!p.qLen.dynamic && !p.kvLen.dynamic &&
      data.ConsumeIntegralInRange<int>(0, 4) == 0) {
    int64_t bq = pickSize(data, 64), bk = pickSize(data, 64);
    int64_t qBlocks = (p.qLen.size + bq - 1) / bq;
    int64_t kBlocks = (p.kvLen.size + bk - 1) / bk;
    blockSize = formatv(" block_size = [{0}, {1}]", bq, bk).str();
    if (data.ConsumeBool()) {
      // blocks(offsets, indices): a CSR layout, each key block listed with
      // probability 1/2.
      SmallVector<int64_t> offsets = {0}, indices;
      for (int64_t r = 0; r < qBlocks; ++r) {
        for (int64_t c = 0; c < kBlocks; ++c)
          if (data.ConsumeBool())
            indices.push_back(c);
        offsets.push_back(indices.size());
      }
      StringRef element = data.ConsumeBool() ? "i32" : "i64";
      std::string off = writer.fresh("offsets"), idx = writer.fresh("indices");
      std::string offType = formatv("tensor<{0}x{1}>", offsets.size(), element);
      std::string idxType = formatv("tensor<{0}x{1}>", indices.size(), element);
      writer.line(formatv("{0} = arith.constant dense<[{1}]> : {2}", off,
                          joinIntegers(offsets), offType));
      // An empty index list is a tensor<0xi32>, written `dense<>`.
      writer.line(formatv("{0} = arith.constant dense<{1}> : {2}", idx,
                          indices.empty() ? std::string()
                                          : "[" + joinIntegers(indices) + "]",
                          idxType));
      clauses.operands +=
          formatv(" blocks({0}, {1} : {2}, {3})", off, idx, offType, idxType)
              .str();
      summary += formatv(" blocks[{0},{1}]", bq, bk).str();
    } else {
      // block_classes: class 0 (skip), 1 (some keys visible) and, only
      // where no other keep condition can hide a key, 2 (all visible): a
      // class-2 tile is a promise the tiled lowering relies on.
      int64_t b = data.ConsumeBool() ? 1 : p.batch.size;
      int64_t h = data.ConsumeBool() ? 1 : p.qHeads.size;
      // Dynamic batch or heads: the verifier cannot check the grid, so
      // broadcast those.
      if (p.batch.dynamic)
        b = 1;
      if (p.qHeads.dynamic)
        h = 1;
      classesShape = {b, h, qBlocks, kBlocks};
      summary += formatv(" block_classes[{0},{1}]", bq, bk).str();
    }
  }

  if (data.ConsumeIntegralInRange<int>(0, 2) == 0) {
    static const char *const scales[] = {"0.5", "0.125", "1.0", "-0.3", "2.0"};
    clauses.attributes +=
        " scale = " + std::string(scales[data.ConsumeIntegralInRange<size_t>(
                          0, std::size(scales) - 1)]);
  }
  bool causal = data.ConsumeIntegralInRange<int>(0, 2) == 0;
  bool window = data.ConsumeIntegralInRange<int>(0, 3) == 0;
  if (causal)
    clauses.attributes += " causal";
  if (window)
    clauses.attributes +=
        formatv(" window = [{0}, {1}]", data.ConsumeIntegralInRange(0, 40),
                data.ConsumeIntegralInRange(0, 40))
            .str();
  if ((causal || window) && data.ConsumeBool())
    clauses.attributes += " align = <bottom_right>";
  keepConditions |= causal || window;
  summary +=
      formatv("{0}{1}", causal ? " causal" : "", window ? " window" : "").str();

  // The seed operand is printed after block_classes, as the ops'
  // assembly format orders them.
  std::string seedOperand;
  if (data.ConsumeIntegralInRange<int>(0, 7) == 0) {
    clauses.attributes +=
        data.ConsumeBool() ? " dropout = 0.5" : " dropout = 0.1";
    if (data.ConsumeBool()) {
      std::string seed = writer.addArgument("seed", {}, "i64");
      seedOperand = " dropout_seed(" + seed + " : tensor<i64>)";
    } else {
      clauses.attributes +=
          formatv(" seed = {0}", data.ConsumeIntegralInRange(0, 1000)).str();
    }
    summary += " dropout";
  }

  if (data.ConsumeIntegralInRange<int>(0, 4) == 0) {
    clauses.regions += " " + pickScoreMod(data);
    summary += " score_mod";
  }
  if (data.ConsumeIntegralInRange<int>(0, 4) == 0) {
    clauses.regions += " " + pickMaskMod(data);
    keepConditions = true;
    summary += " mask_mod";
  }

  if (!classesShape.empty()) {
    std::string values;
    formatNested(data, classesShape, keepConditions ? 1 : 2, values);
    std::string classes = writer.fresh("classes");
    std::string type =
        formatv("tensor<{0}x{1}x{2}x{3}xi8>", classesShape[0], classesShape[1],
                classesShape[2], classesShape[3]);
    writer.line(formatv("{0} = arith.constant dense<{1}> : {2}", classes,
                        values, type));
    clauses.operands +=
        formatv(" block_classes({0} : {1})", classes, type).str();
  }
  clauses.operands += seedOperand;
  clauses.attributes += blockSize;
  return clauses;
}

enum ExtentId { Batch, QHeads, KvHeads, QLen, KvLen, HeadDim, ValueDim };

ScoreProblem pickScoreProblem(FuzzedDataProvider &data) {
  ScoreProblem p;
  p.element = pickElement(data).str();
  p.batch = pickExtent(data, 3, Batch);
  p.kvHeads = pickExtent(data, 3, KvHeads);
  // Grouped-query attention: 1 to 4 query heads per key/value head. (The
  // extent is picked first for its dynamic bit: the order in which bytes
  // are read is what keeps the saved fuzz inputs meaning the same program.)
  p.qHeads = pickExtent(data, 1, QHeads);
  p.qHeads.size = p.kvHeads.size * data.ConsumeIntegralInRange<int64_t>(1, 4);
  p.qLen = pickExtent(data, 200, QLen);
  p.kvLen = pickExtent(data, 200, KvLen);
  p.headDim = pickExtent(data, 160, HeadDim);
  // Dv is D (the usual case) or its own size; either way its own extent,
  // read from the value where it is dynamic.
  p.valueDim = data.ConsumeBool()
                   ? pickExtent(data, 160, ValueDim)
                   : Extent{p.headDim.size, p.headDim.dynamic, ValueDim};
  return p;
}

/// The accumulator (log-sum-exp) element type of `element`.
StringRef getStatElement(StringRef element) {
  return element == "f64" ? "f64" : "f32";
}

/// attn.sdpa (with its lse one time in three), attn.weights, or
/// attn.sdpa_grad after the forward that gives it `out` and `lse`.
void writeScoreProgram(FuzzedDataProvider &data, GeneratedProgram &program) {
  enum {
    Forward,
    Weights,
    Grad
  } kind = static_cast<decltype(kind)>(data.ConsumeIntegralInRange<int>(0, 2));
  ScoreProblem p = pickScoreProblem(data);
  FunctionWriter writer;
  StringRef el = p.element;
  Extent qDims[] = {p.batch, p.qHeads, p.qLen, p.headDim};
  Extent kDims[] = {p.batch, p.kvHeads, p.kvLen, p.headDim};
  Extent vDims[] = {p.batch, p.kvHeads, p.kvLen, p.valueDim};
  Extent oDims[] = {p.batch, p.qHeads, p.qLen, p.valueDim};
  Extent pDims[] = {p.batch, p.qHeads, p.qLen, p.kvLen};
  Extent lseDims[] = {p.batch, p.qHeads, p.qLen};
  std::string qType = formatType(qDims, el), kType = formatType(kDims, el),
              vType = formatType(vDims, el), oType = formatType(oDims, el);
  std::string lseType = formatType(lseDims, getStatElement(el));
  std::string q = writer.addArgument("q", qDims, el);
  std::string k = writer.addArgument("k", kDims, el);
  std::string v = kind == Weights ? "" : writer.addArgument("v", vDims, el);
  std::string dout = kind == Grad ? writer.addArgument("dout", oDims, el) : "";
  program.summary =
      formatv("{0} {1} B{2} Hq{3} Hkv{4} Sq{5} Skv{6} D{7} Dv{8}",
              kind == Forward   ? "sdpa"
              : kind == Weights ? "weights"
                                : "sdpa_grad",
              el, p.batch.size, p.qHeads.size, p.kvHeads.size, p.qLen.size,
              p.kvLen.size, p.headDim.size, p.valueDim.size);
  for (const Extent &e :
       {p.batch, p.qHeads, p.kvHeads, p.qLen, p.kvLen, p.headDim, p.valueDim})
    if (e.dynamic)
      program.summary += " ?" + std::to_string(e.id);
  ScoreClauses c = pickScoreClauses(data, p, writer, program.summary);
  program.work = p.batch.size * p.qHeads.size * p.qLen.size * p.kvLen.size *
                 (p.headDim.size + p.valueDim.size) * (kind == Grad ? 3 : 1);

  if (kind == Weights) {
    std::string init = writer.empty(pDims, el), result = writer.fresh("p");
    std::string pType = formatType(pDims, el);
    writer.line(formatv("{0} = attn.weights {1}, {2}{3} outs({4}){5} : {6}, "
                        "{7} -> {8}{9}",
                        result, q, k, c.operands, init, c.attributes, qType,
                        kType, pType, c.regions));
    program.source = writer.finish({result}, {pType});
  } else {
    bool withLse = kind == Grad || data.ConsumeIntegralInRange<int>(0, 2) == 0;
    std::string init = writer.empty(oDims, el);
    std::string lseInit =
        withLse ? writer.empty(lseDims, getStatElement(el)) : "";
    std::string out = writer.fresh("o"), lse = writer.fresh("lse");
    writer.line(formatv(
        "{0}{1} = attn.sdpa {2}, {3}, {4}{5} outs({6}){7}{8} : {9}, {10}, "
        "{11} -> {12}{13}{14}",
        out, withLse ? ", " + lse : "", q, k, v, c.operands, init,
        withLse ? formatv(" lse({0} : {1})", lseInit, lseType).str() : "",
        c.attributes, qType, kType, vType, oType, withLse ? ", " + lseType : "",
        c.regions));
    if (kind == Forward) {
      program.source = withLse ? writer.finish({out, lse}, {oType, lseType})
                               : writer.finish({out}, {oType});
    } else {
      std::string dq = writer.empty(qDims, el), dk = writer.empty(kDims, el),
                  dv = writer.empty(vDims, el);
      std::string grads = writer.fresh("grad");
      writer.line(formatv(
          "{0}:3 = attn.sdpa_grad {1}, {2}, {3}, {4}, {5}, {6}{7} outs({8}, "
          "{9}, {10}){11} : {12}, {13}, {14}, {15}, {16}{17}",
          grads, q, k, v, out, dout, lse, c.operands, dq, dk, dv, c.attributes,
          qType, kType, vType, oType, lseType, c.regions));
      program.source = writer.finish({grads + "#0", grads + "#1", grads + "#2"},
                                     {qType, kType, vType});
    }
  }
  program.inputShapes = writer.shapes;
}

/// attn.multihead with PyTorch's options: layouts, kdim/vdim, biases,
/// bias_kv, add_zero_attn, both masks, causal, dropout and the weights.
void writeMultiheadProgram(FuzzedDataProvider &data,
                           GeneratedProgram &program) {
  enum { N = 10, L, S };
  StringRef el = pickElement(data);
  int64_t heads = data.ConsumeIntegralInRange<int64_t>(1, 4);
  int64_t embed = heads * pickSize(data, 16);
  Extent batch = pickExtent(data, 3, N), tgt = pickExtent(data, 40, L),
         src = pickExtent(data, 40, S);
  bool separate = data.ConsumeIntegralInRange<int>(0, 2) == 0;
  int64_t kdim = separate && data.ConsumeBool() ? pickSize(data, 48) : embed;
  int64_t vdim = separate && data.ConsumeBool() ? pickSize(data, 48) : embed;
  bool unbatched = data.ConsumeIntegralInRange<int>(0, 4) == 0;
  bool batchFirst = !unbatched && data.ConsumeBool();
  // Self-attention passes one tensor three times (Q, K and V projected
  // together).
  bool self = kdim == embed && vdim == embed && data.ConsumeBool();
  if (self)
    src = tgt;
  Extent e = {embed, false, -1};
  auto layout = [&](Extent seq, int64_t width) -> SmallVector<Extent> {
    Extent w = {width, false, -1};
    if (unbatched)
      return {seq, w};
    if (batchFirst)
      return {batch, seq, w};
    return {seq, batch, w};
  };
  FunctionWriter writer;
  SmallVector<Extent> qDims = layout(tgt, embed), kDims = layout(src, kdim),
                      vDims = layout(src, vdim);
  std::string q = writer.addArgument("query", qDims, el);
  std::string k = self ? q : writer.addArgument("key", kDims, el);
  std::string v = self ? q : writer.addArgument("value", vDims, el);
  std::string clauses;
  auto parameter = [&](StringRef name, ArrayRef<Extent> dims,
                       StringRef element) {
    std::string value = writer.addArgument(name, dims, element);
    clauses +=
        formatv(" {0}({1} : {2})", name, value, formatType(dims, element))
            .str();
  };
  if (separate) {
    parameter("q_proj", {e, e}, el);
    parameter("k_proj", {e, {kdim, false, -1}}, el);
    parameter("v_proj", {e, {vdim, false, -1}}, el);
  } else {
    parameter("in_proj", {{3 * embed, false, -1}, e}, el);
  }
  bool bias = data.ConsumeBool();
  if (bias)
    parameter("in_proj_bias", {{3 * embed, false, -1}}, el);
  bool biasKv = data.ConsumeIntegralInRange<int>(0, 4) == 0;
  if (biasKv) {
    Extent dims[] = {{1, false, -1}, {1, false, -1}, e};
    std::string bk = writer.addArgument("bias_k", dims, el);
    std::string bv = writer.addArgument("bias_v", dims, el);
    clauses +=
        formatv(" bias_kv({0}, {1} : {2}, {2})", bk, bv, formatType(dims, el))
            .str();
  }
  parameter("out_proj", {e, e}, el);
  if (bias)
    parameter("out_proj_bias", {e}, el);
  if (data.ConsumeIntegralInRange<int>(0, 2) == 0) {
    SmallVector<Extent> dims = {src};
    if (!unbatched)
      dims.insert(dims.begin(), batch);
    parameter("key_padding_mask", dims, data.ConsumeBool() ? "i1" : el);
  }
  if (data.ConsumeIntegralInRange<int>(0, 2) == 0) {
    SmallVector<Extent> dims = {tgt, src};
    if (data.ConsumeBool())
      dims.insert(dims.begin(), Extent{(unbatched ? 1 : batch.size) * heads,
                                       !unbatched && batch.dynamic, -1});
    parameter("attn_mask", dims, data.ConsumeBool() ? "i1" : el);
  }
  std::string attributes = formatv(" num_heads = {0}", heads).str();
  if (batchFirst)
    attributes += " batch_first";
  bool zeroAttn = data.ConsumeIntegralInRange<int>(0, 4) == 0;
  if (zeroAttn)
    attributes += " add_zero_attn";
  if (data.ConsumeIntegralInRange<int>(0, 3) == 0)
    attributes += " causal";
  bool weights = data.ConsumeBool();
  bool perHead = weights && data.ConsumeBool();
  if (perHead)
    attributes += " per_head_weights";
  if (data.ConsumeIntegralInRange<int>(0, 7) == 0) {
    attributes += " dropout = 0.25";
    if (data.ConsumeBool()) {
      std::string seed = writer.addArgument("seed", {}, "i64");
      // The operand precedes num_heads in the op's syntax.
      clauses += " dropout_seed(" + seed + " : tensor<i64>)";
    } else {
      attributes += " seed = 7";
    }
  }

  SmallVector<Extent> oDims = layout(tgt, embed);
  std::string oType = formatType(oDims, el);
  Extent keys = {src.size + biasKv + zeroAttn, src.dynamic, -1};
  SmallVector<Extent> wDims = {tgt, keys};
  if (perHead)
    wDims.insert(wDims.begin(), Extent{heads, false, -1});
  if (!unbatched)
    wDims.insert(wDims.begin(), batch);
  std::string wType = formatType(wDims, el);
  std::string out = writer.fresh("out"), probs = writer.fresh("weights");
  std::string types = formatType(qDims, el) + ", " + formatType(kDims, el) +
                      ", " + formatType(vDims, el);
  writer.line(formatv("{0}{1} = attn.multihead {2}, {3}, {4}{5}{6} : {7} -> "
                      "{8}{9}",
                      out, weights ? ", " + probs : "", q, k, v, clauses,
                      attributes, types, oType, weights ? ", " + wType : ""));
  program.source = weights ? writer.finish({out, probs}, {oType, wType})
                           : writer.finish({out}, {oType});
  program.inputShapes = writer.shapes;
  int64_t n = unbatched ? 1 : batch.size;
  program.work =
      n * (tgt.size * embed * embed * 2 + src.size * embed * (kdim + vdim) +
           heads * tgt.size * keys.size * 2 * (embed / heads));
  program.summary =
      formatv("multihead {0} N{1} L{2} S{3} E{4} H{5} kdim{6} vdim{7}{8}{9}",
              el, n, tgt.size, src.size, embed, heads, kdim, vdim,
              unbatched    ? " unbatched"
              : batchFirst ? " batch_first"
                           : "",
              self ? " self" : "")
          .str() +
      clauses + attributes;
}

/// Sizes and switches of the CPU pipeline: zero leaves a size to the target
/// model; the others are what a user may pass with --cpu-pipeline.
std::string pickCpuPipeline(FuzzedDataProvider &data) {
  SmallVector<std::string> options;
  if (data.ConsumeIntegralInRange<int>(0, 3) == 0)
    options.push_back("lowering=reference");
  auto size = [&](StringRef name, int64_t max) {
    if (data.ConsumeBool())
      options.push_back(formatv("{0}={1}", name, pickSize(data, max)));
  };
  size("q-tile", 160);
  size("kv-tile", 160);
  size("m-block", 8);
  size("n-block", 64);
  size("row-elements", 256);
  if (data.ConsumeIntegralInRange<int>(0, 4) == 0)
    options.push_back("vectorize=false");
  if (data.ConsumeIntegralInRange<int>(0, 3) == 0)
    options.push_back("bf16-dot=false");
  if (data.ConsumeBool())
    options.push_back("threads=false");
  return llvm::join(options, " ");
}

} // namespace

GeneratedProgram attn::generateProgram(FuzzedDataProvider &data) {
  GeneratedProgram program;
  program.cpuPipeline = pickCpuPipeline(data);
  // Bytes run out as zeros: attn.sdpa is the first choice.
  if (data.ConsumeIntegralInRange<int>(0, 4) == 4)
    writeMultiheadProgram(data, program);
  else
    writeScoreProgram(data, program);
  return program;
}
