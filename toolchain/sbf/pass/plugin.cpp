// opt plugin entry: registers two module passes. `oncepay-sbf-softfloat` runs
// first, before `internalize` (it calls builtins that are not referenced yet);
// `oncepay-sbf` runs after O2, its rewrites in an order where later ones see
// the output of earlier ones.
#include "sbf-passes.h"

#include "llvm/IR/PassManager.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Passes/PassBuilder.h"
#include "llvm/Plugins/PassPlugin.h"
#include "llvm/Support/raw_ostream.h"

using namespace llvm;

namespace {

struct OncepaySbfPass : PassInfoMixin<OncepaySbfPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    bool changed = false;
    // Integer rewrites first: they may add calls (none today) and must not
    // see arguments already moved into spill structs.
    changed |= oncepay_sbf::rewriteIntegerArith(M);
    changed |= oncepay_sbf::rewriteMemIntrinsics(M);
    changed |= oncepay_sbf::rewriteTraps(M);
    // Call ABI last, so helper calls created above are covered too.
    changed |= oncepay_sbf::rewriteCallAbi(M);
    if (verifyModule(M, &errs()))
      report_fatal_error("oncepay-sbf: module is broken after rewriting");
    return changed ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

struct OncepaySoftFloatPass : PassInfoMixin<OncepaySoftFloatPass> {
  PreservedAnalyses run(Module &M, ModuleAnalysisManager &) {
    return oncepay_sbf::rewriteSoftFloat(M) ? PreservedAnalyses::none() : PreservedAnalyses::all();
  }
};

} // namespace

extern "C" LLVM_ATTRIBUTE_WEAK PassPluginLibraryInfo llvmGetPassPluginInfo() {
  return {LLVM_PLUGIN_API_VERSION, "oncepay-sbf", "0.1", [](PassBuilder &PB) {
            PB.registerPipelineParsingCallback(
                [](StringRef name, ModulePassManager &MPM,
                   ArrayRef<PassBuilder::PipelineElement>) {
                  if (name == "oncepay-sbf") {
                    MPM.addPass(OncepaySbfPass());
                    return true;
                  }
                  if (name == "oncepay-sbf-softfloat") {
                    MPM.addPass(OncepaySoftFloatPass());
                    return true;
                  }
                  return false;
                });
          }};
}
