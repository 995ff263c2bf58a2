#!/usr/bin/env python3
# ===- scripts/mutation-run.py - does the suite catch a wrong semantic? ----=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
#   python3 scripts/mutation-run.py [--build build] [--tests DIR ...] [--only M3]
#
# Applies one semantic mutation at a time to the attention builders
# (ScoreBuilders, KeyBand, TileAttention, and the bf16 dot lowering of
# VectorizeTiles: one comparison, operand or constant each), rebuilds incrementally, runs the tests that execute compiled code,
# and restores the source. A mutant is killed when some test fails; the
# table says which tests killed it, and whether one of them compares with an
# oracle independent of the builders (attn_check.py's NumPy float64, or
# --expected arrays) rather than with the float64 build of the same
# builders (attn-run --check). Takes about 3-5 minutes per mutant on two
# cores: a documented command, not a CI step (docs/Testing.md records runs).
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCORE = "lib/Dialect/Attn/Utils/ScoreBuilders.cpp"
BAND = "lib/Dialect/Attn/Analysis/KeyBand.cpp"
TILE_STEPS = "lib/Dialect/Attn/Transforms/TileSteps.cpp"
TILE_LOOPS = "lib/Dialect/Attn/Transforms/TileLoops.cpp"
TILE_BUILDER = "lib/Dialect/Attn/Transforms/TileBuilder.h"
VECTORIZE = "lib/Target/Cpu/Transforms/BlockLowering.cpp"

# (name, file, original text, mutated text, what it breaks)
MUTANTS = [
    ("M1", SCORE,
     "arith::CmpIPredicate::sle, idx[3],\n                                    diag));",
     "arith::CmpIPredicate::slt, idx[3],\n                                    diag));",
     "causal: the diagonal itself masked"),
    ("M2", SCORE,
     "arith::CmpIPredicate::slt, idx[3],\n                                  kvLength));",
     "arith::CmpIPredicate::sle, idx[3],\n                                  kvLength));",
     "kv_lens: one key past the length kept"),
    ("M3", SCORE,
     "arith::SubIOp::create(b, loc, kvLength, queryLength)",
     "arith::SubIOp::create(b, loc, queryLength, kvLength)",
     "bottom-right alignment: offset negated"),
    ("M4", SCORE,
     "shifted(-sem.window->first)",
     "shifted(1 - sem.window->first)",
     "window: left edge one key short"),
    ("M5", SCORE,
     "arith::CmpFPredicate::OEQ, sum, zero",
     "arith::CmpFPredicate::ONE, sum, zero",
     "fully masked rows: the 0-for-empty rule inverted"),
    ("M6", BAND,
     "arith::CmpIPredicate::eq,\n                                           everyEnd, keyCount",
     "arith::CmpIPredicate::ne,\n                                           everyEnd, keyCount",
     "key band: full tiles end at the wrong tile"),
    ("M7", TILE_LOOPS,
     "return arith::DivUIOp::create(b, loc, head, group);",
     "return arith::RemUIOp::create(b, loc, head, group);",
     "GQA: query head h reads key head h % group"),
    ("M8", TILE_STEPS,
     "ValueRange{m, newMax}",
     "ValueRange{newMax, m}",
     "online softmax: rescale factor inverted"),
    # (Padding P with 1 instead of 0 is an equivalent mutant: V's padding
    # row is zero, so the product is 0 either way.)
    ("M9", VECTORIZE,
     "rewriter, loc, rhsFlat, ArrayRef<int64_t>{2 * c},",
     "rewriter, loc, rhsFlat, ArrayRef<int64_t>{0},",
     "vdpbf16ps: every lane chunk reads the first 16 key pairs"),
    ("M10", TILE_BUILDER,
     "auto isBf16 = [](Value v) {\n      return cast<ShapedType>(v.getType()).getElementType().isBF16();",
     "auto isBf16 = [](Value v) {\n      return !cast<ShapedType>(v.getType()).getElementType().isBF16();",
     "bf16 pairs: taken for the wrong element types"),
]



def is_independent(test):
    """Whether `test` compares with an oracle independent of the builders:
    it runs attn_check.py (NumPy float64) or passes --expected arrays."""
    text = open(os.path.join(ROOT, "test", test)).read()
    return "attn_check.py" in text or "--expected" in text


def run(cmd, **kw):
    return subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, **kw)


def failing_tests(build, tests):
    lit = os.environ.get("LIT", "/usr/lib/llvm-22/bin/lit")
    out = run([lit, "-q"] + [os.path.join(build, "test", t) for t in tests]).stdout
    return sorted(set(re.findall(r"^\s*ATTN :: (\S+)", out, re.M)))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    p.add_argument("--tests", nargs="+",
                   default=["Integration/CPU", "Examples", "Tools/attn-run"])
    p.add_argument("--only", nargs="+", help="mutant names to run")
    a = p.parse_args()
    if run(["git", "diff", "--quiet", "--"] + [SCORE, BAND, TILE_STEPS, TILE_LOOPS, TILE_BUILDER, VECTORIZE]).returncode:
        sys.exit("mutation-run: the builders have uncommitted changes; commit them first")
    print("| mutant | what it breaks | killed by | independent oracle |")
    print("|---|---|---|---|")
    killed = independent = 0
    chosen = [m for m in MUTANTS if not a.only or m[0] in a.only]
    for name, path, old, new, what in chosen:
        full = os.path.join(ROOT, path)
        text = open(full).read()
        if text.count(old) != 1:
            print(f"| {name} | {what} | not applied: the original text is not unique | |")
            continue
        try:
            open(full, "w").write(text.replace(old, new))
            built = run(["cmake", "--build", a.build])
            if built.returncode:
                print(f"| {name} | {what} | build failed | |")
                continue
            failed = failing_tests(a.build, a.tests)
        finally:
            open(full, "w").write(text)
        ind = [t for t in failed if is_independent(t)]
        killed += bool(failed)
        independent += bool(ind)
        shown = ", ".join(failed)
        print(f"| {name} | {what} | {shown or 'SURVIVED'} | {'yes' if ind else 'no'} |",
              flush=True)
    print(f"\n{killed} of {len(chosen)} mutants killed, {independent} by an independent oracle")
    run(["cmake", "--build", a.build])


if __name__ == "__main__":
    main()
