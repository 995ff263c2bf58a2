//===- Autotune.cpp - time candidate sizes, keep the winner ---------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "attn/Runner/Autotune.h"

#include "attn/Dialect/Attn/IR/AttnDialect.h"
#include "attn/Runner/JitRunner.h"
#include "attn/Runner/RandomInputs.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/Process.h"
#include "llvm/Support/xxhash.h"

#include <chrono>

using namespace mlir;
using namespace mlir::attn;
namespace json = llvm::json;

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

/// `shape` with every dimension but the innermost rounded up to a power of
/// two: `1x8x3000x64` -> `1x8x4096x64`.
static void printProblemShape(llvm::raw_ostream &os, ArrayRef<int64_t> shape) {
  for (auto [i, size] : llvm::enumerate(shape)) {
    if (i)
      os << 'x';
    if (ShapedType::isDynamic(size))
      os << '?';
    else if (i + 1 == shape.size() || size <= 0)
      os << size;
    else
      os << llvm::PowerOf2Ceil(size);
  }
}

std::optional<TuningKey> attn::getTuningKey(ModuleOp module,
                                            const CpuTargetModel &target,
                                            const CpuPipelineOptions &options) {
  std::string problem, dtype;
  llvm::raw_string_ostream os(problem);
  module.walk([&](Operation *op) {
    if (!isa<AttnDialect>(op->getDialect()) || op->getNumOperands() == 0)
      return;
    if (!problem.empty())
      os << "; ";
    os << op->getName().stripDialect() << '(';
    llvm::interleaveComma(op->getOperandTypes(), os, [&](Type type) {
      if (auto tensor = dyn_cast<RankedTensorType>(type))
        printProblemShape(os, tensor.getShape());
      else
        os << type;
    });
    os << ')';
    // The scale changes no code; every other attribute (causal, window,
    // alignment, dropout, block size, heads) may.
    for (NamedAttribute attr : op->getAttrs()) {
      if (attr.getName() == "scale" || attr.getName() == "seed" ||
          attr.getName() == "operandSegmentSizes")
        continue;
      os << ' ' << attr.getName().getValue();
      if (auto number = dyn_cast<FloatAttr>(attr.getValue()))
        os << '=' << number.getValueAsDouble();
      else if (!isa<UnitAttr>(attr.getValue()))
        os << '=' << attr.getValue();
    }
    if (dtype.empty())
      if (auto tensor =
              dyn_cast<RankedTensorType>(op->getOperand(0).getType())) {
        llvm::raw_string_ostream typeOs(dtype);
        typeOs << tensor.getElementType();
      }
  });
  if (problem.empty())
    return std::nullopt;
  // What the pipeline fixes decides what the winner was chosen among, and
  // threads change the times themselves.
  SmallVector<std::string> given;
  std::pair<StringRef, int64_t> sizes[] = {{"q-tile", options.qTile},
                                           {"kv-tile", options.kvTile},
                                           {"m-block", options.mBlock},
                                           {"n-block", options.nBlock}};
  for (auto [name, size] : sizes)
    if (size)
      given.push_back((name + "=" + Twine(size)).str());
  if (!options.vectorize)
    given.push_back("vectorize=false");
  if (!options.threads)
    given.push_back("threads=false");
  if (!options.valuePanels)
    given.push_back("value-panels=false");
  if (options.bf16Dot.hasValue())
    given.push_back(options.bf16Dot ? "bf16-dot=true" : "bf16-dot=false");
  if (!given.empty())
    os << " [" << llvm::join(given, " ") << "]";
  return TuningKey{target.description, problem, dtype};
}

//===----------------------------------------------------------------------===//
// Sizes and candidates
//===----------------------------------------------------------------------===//

std::string TuningSizes::str() const {
  std::string text = llvm::formatv("q-tile={0} kv-tile={1} m-block={2} "
                                   "n-block={3}",
                                   qTile, kvTile, mBlock, nBlock);
  if (bf16Dot)
    text += *bf16Dot ? " bf16-dot=true" : " bf16-dot=false";
  return text;
}

std::string TuningSizes::verify(const CpuTargetModel &target) const {
  std::pair<StringRef, int64_t> sizes[] = {{"q-tile", qTile},
                                           {"kv-tile", kvTile},
                                           {"m-block", mBlock},
                                           {"n-block", nBlock}};
  for (auto [name, size] : sizes)
    if (size < 1 || size > 1024)
      return llvm::formatv("{0}={1} is not in [1, 1024]", name, size).str();
  int64_t lanes = target.getF32Lanes();
  if (nBlock % lanes != 0)
    return llvm::formatv("n-block={0} is not a whole number of {1}-lane "
                         "vectors",
                         nBlock, lanes)
        .str();
  if (nBlock > kvTile)
    return llvm::formatv("n-block={0} is wider than kv-tile={1}", nBlock,
                         kvTile)
        .str();
  int64_t live = CpuKernelConfig::getLiveRegisters(mBlock, nBlock, target);
  if (live > target.vectorRegisters)
    return llvm::formatv("a {0} x {1} block needs {2} vector registers, the "
                         "target has {3}",
                         mBlock, nBlock, live, target.vectorRegisters)
        .str();
  if (bf16Dot.value_or(false) && !target.avx512Bf16)
    return "bf16-dot=true on a target without avx512bf16";
  return "";
}

void TuningSizes::apply(CpuPipelineOptions &options) const {
  options.qTile = qTile;
  options.kvTile = kvTile;
  options.mBlock = mBlock;
  options.nBlock = nBlock;
  if (bf16Dot)
    options.bf16Dot = *bf16Dot;
}

SmallVector<TuningSizes>
attn::getTuningCandidates(const CpuPipelineOptions &options,
                          const CpuTargetModel &target, bool bf16) {
  CpuKernelConfig base = getCpuKernelConfig(options, target);
  int64_t lanes = target.getF32Lanes();

  // Register blocks: the model's, then the other shapes with as many
  // accumulators (which one wins depends on the core: 8x32 beat 4x64 on
  // Zen 5, the reverse on Sapphire Rapids).
  // Where the model took a taller block than the best power-of-two one (too
  // few accumulators to hide the FMA latency), that one is timed too.
  SmallVector<RegisterBlock> blocks = {{base.mBlock, base.nBlock}};
  int64_t accumulators = base.mBlock * (base.nBlock / lanes);
  SmallVector<RegisterBlock> fitting = getRegisterBlocks(target, base.kvTile);
  for (auto [index, block] : llvm::enumerate(fitting)) {
    if (blocks.size() == 3)
      break;
    bool replaced = index == 0 && block.m * (block.n / lanes) < accumulators;
    if ((options.mBlock && block.m != base.mBlock) ||
        (options.nBlock && block.n != base.nBlock) ||
        (block.m * (block.n / lanes) != accumulators && !replaced) ||
        (block.m == base.mBlock && block.n == base.nBlock))
      continue;
    blocks.push_back(block);
  }

  SmallVector<int64_t> qTiles = {base.qTile};
  if (!options.qTile && base.qTile / 2 >= 32)
    qTiles.push_back(base.qTile / 2);

  SmallVector<TuningSizes> candidates;
  for (RegisterBlock block : blocks)
    for (int64_t qTile : qTiles)
      candidates.push_back(
          {qTile, base.kvTile, block.m, block.n, /*bf16Dot=*/std::nullopt});
  // A longer key tile halves the softmax rescales of the accumulators.
  if (!options.kvTile && base.kvTile * 2 <= 256)
    candidates.push_back({base.qTile, base.kvTile * 2, base.mBlock, base.nBlock,
                          /*bf16Dot=*/std::nullopt});
  // vdpbf16ps against widening: 1.5-1.9x faster on Zen 4, 1.2-1.6x slower
  // on Sapphire Rapids (the model's rule follows those two; other cores are
  // measured here).
  if (bf16 && target.avx512Bf16 && !options.bf16Dot.hasValue())
    candidates.push_back(
        {base.qTile, base.kvTile, base.mBlock, base.nBlock, !base.bf16Dot});
  return candidates;
}

//===----------------------------------------------------------------------===//
// The cache file
//===----------------------------------------------------------------------===//

/// What the sizes were measured for, beyond the CPU's name: two hosts may
/// report the same model name with other features (a VM's "AMD EPYC").
static std::string getTargetFingerprint(const CpuTargetModel &target) {
  return llvm::formatv("{0} {1} {2}", target.triple, target.cpu,
                       llvm::utohexstr(llvm::xxh3_64bits(target.features)))
      .str();
}

static constexpr int64_t kCacheFormat = 1;

/// Why `entry` is not a well-formed cache entry, or "".
static std::string checkEntry(const json::Value &entry) {
  const json::Object *object = entry.getAsObject();
  if (!object)
    return "not an object";
  for (StringRef field : {"cpu", "problem", "dtype", "target"})
    if (!object->getString(field))
      return ("no string \"" + field + "\"").str();
  const json::Object *sizes = object->getObject("sizes");
  if (!sizes)
    return "no object \"sizes\"";
  for (StringRef field : {"q-tile", "kv-tile", "m-block", "n-block"})
    if (!sizes->getInteger(field))
      return ("no integer \"sizes\".\"" + field + "\"").str();
  if (sizes->get("bf16-dot") && !sizes->getBoolean("bf16-dot"))
    return "\"sizes\".\"bf16-dot\" is not a boolean";
  return "";
}

TuningCache TuningCache::load(StringRef path,
                              SmallVectorImpl<std::string> &warnings) {
  TuningCache cache;
  cache.path = path.str();
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    if (buffer.getError() != std::errc::no_such_file_or_directory)
      warnings.push_back("cannot read the tuning cache " + path.str() + ": " +
                         buffer.getError().message() + "; ignoring it");
    return cache;
  }
  auto ignore = [&](const Twine &why) {
    warnings.push_back(("the tuning cache " + path + " " + why +
                        "; ignoring it (the next tuning rewrites it)")
                           .str());
    return cache;
  };
  llvm::Expected<json::Value> value = json::parse((*buffer)->getBuffer());
  if (!value)
    return ignore("is not valid JSON (" + llvm::toString(value.takeError()) +
                  ")");
  const json::Object *root = value->getAsObject();
  if (!root || root->getInteger("format") != kCacheFormat ||
      !root->getArray("entries"))
    return ignore("is not an attn-mlir tuning cache of format " +
                  Twine(kCacheFormat));
  for (auto [i, entry] : llvm::enumerate(*root->getArray("entries"))) {
    std::string problem = checkEntry(entry);
    if (!problem.empty()) {
      warnings.push_back(llvm::formatv("the tuning cache {0}: entry #{1} is "
                                       "malformed ({2}); ignoring it",
                                       path, i, problem)
                             .str());
      continue;
    }
    cache.entries.push_back(entry);
  }
  return cache;
}

/// Whether `entry` (well formed) is stored under `key`.
static bool hasKey(const json::Value &entry, const TuningKey &key) {
  const json::Object &object = *entry.getAsObject();
  return object.getString("cpu") == key.cpu &&
         object.getString("problem") == key.problem &&
         object.getString("dtype") == key.dtype;
}

std::optional<TuningSizes>
TuningCache::lookup(const TuningKey &key, const CpuTargetModel &target,
                    SmallVectorImpl<std::string> &warnings) {
  std::string fingerprint = getTargetFingerprint(target);
  for (const json::Value &entry : entries) {
    if (!hasKey(entry, key))
      continue;
    const json::Object &object = *entry.getAsObject();
    if (object.getString("target") != fingerprint) {
      warnings.push_back(llvm::formatv(
          "the tuning cache {0} has an entry for this CPU's name measured "
          "for another target ('{1}', this is '{2}'); ignoring it",
          path, *object.getString("target"), fingerprint));
      continue;
    }
    const json::Object &sizesObject = *object.getObject("sizes");
    TuningSizes sizes{
        *sizesObject.getInteger("q-tile"), *sizesObject.getInteger("kv-tile"),
        *sizesObject.getInteger("m-block"), *sizesObject.getInteger("n-block"),
        sizesObject.getBoolean("bf16-dot")};
    std::string problem = sizes.verify(target);
    if (!problem.empty()) {
      warnings.push_back(llvm::formatv("the tuning cache {0} has an entry "
                                       "with sizes this target cannot use "
                                       "({1}); ignoring it",
                                       path, problem)
                             .str());
      continue;
    }
    return sizes;
  }
  return std::nullopt;
}

void TuningCache::insert(const TuningKey &key, const CpuTargetModel &target,
                         const TuningSizes &sizes, double seconds) {
  llvm::json::Array kept;
  for (json::Value &entry : entries)
    if (!hasKey(entry, key))
      kept.push_back(std::move(entry));
  entries = std::move(kept);
  json::Object sizesObject{{"q-tile", sizes.qTile},
                           {"kv-tile", sizes.kvTile},
                           {"m-block", sizes.mBlock},
                           {"n-block", sizes.nBlock}};
  if (sizes.bf16Dot)
    sizesObject["bf16-dot"] = *sizes.bf16Dot;
  entries.push_back(json::Object{{"cpu", key.cpu},
                                 {"problem", key.problem},
                                 {"dtype", key.dtype},
                                 {"target", getTargetFingerprint(target)},
                                 {"sizes", std::move(sizesObject)},
                                 {"seconds", seconds}});
}

llvm::Error TuningCache::save() const {
  StringRef directory = llvm::sys::path::parent_path(path);
  if (!directory.empty())
    if (std::error_code ec = llvm::sys::fs::create_directories(directory))
      return llvm::createStringError(ec, "cannot create " + directory + ": " +
                                             ec.message());
  // Written whole to a temporary file and renamed over the cache, so that a
  // concurrent reader sees the old file or the new one, never a part.
  int fd;
  SmallString<256> temporary;
  if (std::error_code ec = llvm::sys::fs::createUniqueFile(
          path + ".tmp-%%%%%%%%", fd, temporary))
    return llvm::createStringError(ec, "cannot write next to " + path + ": " +
                                           ec.message());
  {
    llvm::raw_fd_ostream os(fd, /*shouldClose=*/true);
    json::Value root = json::Object{{"format", kCacheFormat},
                                    {"entries", json::Array(entries)}};
    os << llvm::formatv("{0:2}", root) << "\n";
    if (os.has_error()) {
      std::string message = os.error().message();
      os.clear_error();
      llvm::sys::fs::remove(temporary);
      return llvm::createStringError("cannot write " + temporary + ": " +
                                     message);
    }
  }
  if (std::error_code ec = llvm::sys::fs::rename(temporary, path)) {
    llvm::sys::fs::remove(temporary);
    return llvm::createStringError(ec, "cannot replace " + path + ": " +
                                           ec.message());
  }
  return llvm::Error::success();
}

std::string attn::getDefaultTuningCachePath() {
  SmallString<256> path;
  if (std::optional<std::string> dir =
          llvm::sys::Process::GetEnv("ATTN_MLIR_CACHE_DIR");
      dir && !dir->empty()) {
    path = *dir;
  } else if (std::optional<std::string> xdg =
                 llvm::sys::Process::GetEnv("XDG_CACHE_HOME");
             xdg && !xdg->empty()) {
    path = *xdg;
    llvm::sys::path::append(path, "attn_mlir");
  } else {
    llvm::sys::path::home_directory(path);
    llvm::sys::path::append(path, ".cache", "attn_mlir");
  }
  llvm::sys::path::append(path, "tuning.json");
  return path.str().str();
}

//===----------------------------------------------------------------------===//
// Timing
//===----------------------------------------------------------------------===//

namespace {
/// One public function with the arrays it is timed on.
struct TimedFunction {
  FunctionAbi abi;
  SmallVector<HostArray> arrays;
};
} // namespace

/// The fastest of repeated calls of `function` on `arrays`, in seconds: one
/// warm-up call, then calls until `minSeconds` have passed and at least
/// three were made.
static llvm::Expected<double> timeCalls(JitFunction &function,
                                        MutableArrayRef<HostArray> arrays,
                                        double minSeconds) {
  using Clock = std::chrono::steady_clock;
  if (llvm::Error error = function.call(arrays))
    return std::move(error);
  double best = INFINITY, total = 0;
  for (int runs = 0; runs < 3 || (total < minSeconds && runs < 100); ++runs) {
    Clock::time_point start = Clock::now();
    if (llvm::Error error = function.call(arrays))
      return std::move(error);
    double seconds =
        std::chrono::duration<double>(Clock::now() - start).count();
    best = std::min(best, seconds);
    total += seconds;
  }
  return best;
}

llvm::Expected<AutotuneResult>
attn::autotune(ModuleOp module, const CpuTargetOptions &target,
               const CpuTargetModel &model, const CpuPipelineOptions &pipeline,
               const AutotuneOptions &options) {
  AutotuneResult result;
  if (!model.isHost)
    return llvm::createStringError(
        "autotuning times the code on this machine; the target (" +
        model.triple + ", " + model.cpu + ") is not this machine");
  // The reference lowering has no tiles or register blocks.
  if (pipeline.lowering == SdpaLowering::Reference)
    return result;
  result.key = getTuningKey(module, model, pipeline);
  if (!result.key)
    return result;
  result.cachePath = options.cachePath.empty() ? getDefaultTuningCachePath()
                                               : options.cachePath;
  TuningCache cache = TuningCache::load(result.cachePath, result.warnings);
  if (std::optional<TuningSizes> sizes =
          cache.lookup(*result.key, model, result.warnings)) {
    result.source = AutotuneResult::Source::Cache;
    result.sizes = *sizes;
    return result;
  }
  if (!options.measure) {
    result.source = AutotuneResult::Source::NotInCache;
    return result;
  }

  // Every public function, on seeded inputs of its real (static) shapes.
  FailureOr<SmallVector<FunctionAbi>> abis = getModuleAbi(module);
  if (failed(abis))
    return llvm::createStringError("the module's functions have no C ABI");
  SmallVector<TimedFunction, 1> functions;
  for (const FunctionAbi &abi : *abis) {
    SmallVector<SmallVector<int64_t>> shapes;
    for (auto [i, param] : llvm::enumerate(abi.params)) {
      if (!param.hasStaticShape())
        return llvm::createStringError(llvm::formatv(
            "autotuning runs the real shapes, and parameter #{0} of @{1} "
            "is {2}: give it static dimensions",
            i, abi.name, formatTensorType(param.shape, param.element)));
      shapes.push_back(SmallVector<int64_t>(param.shape));
    }
    auto func = module.lookupSymbol<func::FuncOp>(abi.name);
    TimedFunction &timed = functions.emplace_back();
    timed.abi = abi;
    timed.arrays = makeRandomInputs(
        func, abi, ArrayRef(shapes).take_front(abi.numInputs), /*seed=*/1);
    for (unsigned i = abi.numInputs; i < abi.params.size(); ++i)
      timed.arrays.emplace_back(abi.params[i].element, shapes[i]);
  }

  for (const TuningSizes &sizes :
       getTuningCandidates(pipeline, model, result.key->dtype == "bf16")) {
    // From the pipeline's options each time: a candidate's bf16-dot must
    // not carry over to the next.
    CpuPipelineOptions candidateOptions;
    candidateOptions.copyOptionValuesFrom(pipeline);
    sizes.apply(candidateOptions);
    double total = 0;
    for (TimedFunction &timed : functions) {
      auto function = JitFunction::compile(module, timed.abi, target, model,
                                           candidateOptions);
      if (!function)
        return function.takeError();
      llvm::Expected<double> seconds =
          timeCalls(**function, timed.arrays, options.secondsPerCandidate);
      if (!seconds)
        return seconds.takeError();
      total += *seconds;
    }
    result.timings.push_back({sizes, total});
  }
  auto fastest = llvm::min_element(
      result.timings, [](auto &a, auto &b) { return a.second < b.second; });
  result.source = AutotuneResult::Source::Measured;
  result.sizes = fastest->first;
  cache.insert(*result.key, model, result.sizes, fastest->second);
  if (llvm::Error error = cache.save())
    result.warnings.push_back("the tuning result is not kept: " +
                              llvm::toString(std::move(error)));
  return result;
}

void AutotuneResult::print(llvm::raw_ostream &os) const {
  switch (source) {
  case Source::NothingToTune:
    os << "autotune: nothing to tune (no attn op, or lowering=reference)\n";
    return;
  case Source::NotInCache:
    os << "autotune: " << cachePath
       << " has no entry for this problem; the target model's sizes are "
          "used (--autotune measures)\n";
    break;
  case Source::Cache:
    os << "autotune: " << sizes.str() << ", from the tuning cache " << cachePath
       << "\n";
    break;
  case Source::Measured:
    os << "autotune: " << timings.size()
       << " candidates timed on this machine (the fastest call of every "
          "public function, summed):\n";
    for (const auto &[candidate, seconds] : timings)
      os << llvm::formatv("  {0}: {1:F3} ms{2}\n", candidate.str(),
                          seconds * 1e3,
                          candidate == sizes ? "  <- fastest" : "");
    os << "autotune: " << sizes.str() << ", stored in " << cachePath << "\n";
    break;
  }
  os << "autotune: key: cpu '" << key->cpu << "', dtype " << key->dtype
     << ", problem '" << key->problem << "'\n";
}
