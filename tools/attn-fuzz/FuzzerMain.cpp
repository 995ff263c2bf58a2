//===- FuzzerMain.cpp - run fuzz inputs where there is no libFuzzer -------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
// Linked into the fuzz targets when the compiler cannot link libFuzzer
// (-fsanitize=fuzzer): each argument, a file or a directory of files, is
// run once, so that the corpus and the regression inputs still run.
//
//===----------------------------------------------------------------------===//

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>

extern "C" int LLVMFuzzerInitialize(int *argc, char ***argv);
extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int runFile(const llvm::Twine &path) {
  auto buffer = llvm::MemoryBuffer::getFile(path);
  if (!buffer) {
    llvm::errs() << path << ": " << buffer.getError().message() << "\n";
    return 1;
  }
  LLVMFuzzerTestOneInput(
      reinterpret_cast<const uint8_t *>((*buffer)->getBufferStart()),
      (*buffer)->getBufferSize());
  return 0;
}

int main(int argc, char **argv) {
  LLVMFuzzerInitialize(&argc, &argv);
  int failures = 0, inputs = 0;
  for (int i = 1; i < argc; ++i) {
    llvm::StringRef arg = argv[i];
    // libFuzzer's own flags (-runs=, -max_total_time=) mean nothing here.
    if (arg.starts_with("-"))
      continue;
    if (!llvm::sys::fs::is_directory(arg)) {
      failures += runFile(arg);
      ++inputs;
      continue;
    }
    std::error_code ec;
    for (llvm::sys::fs::recursive_directory_iterator it(arg, ec), end;
         it != end && !ec; it.increment(ec)) {
      if (llvm::sys::fs::is_regular_file(it->path())) {
        failures += runFile(it->path());
        ++inputs;
      }
    }
  }
  llvm::outs() << "ran " << inputs << " inputs without libFuzzer\n";
  return failures ? 1 : 0;
}
