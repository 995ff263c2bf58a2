//===- FuzzSupport.h - what the attn fuzzers share ------------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#ifndef ATTN_TOOLS_ATTNFUZZ_FUZZSUPPORT_H
#define ATTN_TOOLS_ATTNFUZZ_FUZZSUPPORT_H

#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "llvm/ADT/Twine.h"

#include <string>

namespace mlir {
class DialectRegistry;
namespace attn {

/// The dialects, extensions and translations attnc and attn-run register,
/// built once.
const DialectRegistry &getFuzzRegistry();

/// ATTN_FUZZ_VERBOSE is set: print each input's program, choices and
/// diagnostics to stderr.
bool isFuzzVerbose();

/// Collects the diagnostics of a context (instead of printing them: a fuzz
/// iteration that ends in a diagnostic is a success) and counts the errors.
class DiagnosticRecorder {
public:
  explicit DiagnosticRecorder(MLIRContext &context);
  unsigned getErrorCount() const { return errors; }
  /// Every diagnostic so far, one per line.
  const std::string &getText() const { return text; }

private:
  ScopedDiagnosticHandler handler;
  unsigned errors = 0;
  std::string text;
};

/// A finding: prints `message`, `details` and `program` to stderr and
/// aborts, so that libFuzzer saves the input that caused it.
[[noreturn]] void reportFinding(const llvm::Twine &message,
                                llvm::StringRef details,
                                llvm::StringRef program);

} // namespace attn
} // namespace mlir

#endif // ATTN_TOOLS_ATTNFUZZ_FUZZSUPPORT_H
