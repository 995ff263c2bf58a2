//===- FuzzSupport.cpp - what the attn fuzzers share ----------------------===//
//
// Part of attn-mlir, an MLIR-based attention compiler.
//
//===----------------------------------------------------------------------===//

#include "FuzzSupport.h"
#include "attn/Tools/DriverSupport.h"
#include "mlir/IR/DialectRegistry.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdlib>

using namespace mlir;
using namespace mlir::attn;

const DialectRegistry &attn::getFuzzRegistry() {
  static const DialectRegistry *registry = [] {
    auto *result = new DialectRegistry();
    registerCpuDriverDialects(*result);
    return result;
  }();
  return *registry;
}

bool attn::isFuzzVerbose() {
  static const bool verbose = std::getenv("ATTN_FUZZ_VERBOSE") != nullptr;
  return verbose;
}

DiagnosticRecorder::DiagnosticRecorder(MLIRContext &context)
    : handler(&context, [this](Diagnostic &diagnostic) {
        if (diagnostic.getSeverity() == DiagnosticSeverity::Error)
          ++errors;
        llvm::raw_string_ostream os(text);
        os << diagnostic.getLocation() << ": " << diagnostic << "\n";
        for (const Diagnostic &note : diagnostic.getNotes())
          os << "  note: " << note << "\n";
        return success();
      }) {}

void attn::reportFinding(const llvm::Twine &message, llvm::StringRef details,
                         llvm::StringRef program) {
  llvm::errs() << "==== attn fuzz finding: " << message << "\n";
  if (!details.empty())
    llvm::errs() << details << "\n";
  llvm::errs() << "==== program:\n" << program << "\n====\n";
  llvm::errs().flush();
  std::abort();
}
