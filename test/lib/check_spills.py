#!/usr/bin/env python3
# ===- check_spills.py - no stack spills in the hot loops of an .s file ---=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# Reads assembly LLVM printed with its verbose comments (x86-64 or AArch64)
# and finds the innermost loops that do floating-point multiply-adds. The
# hot ones are those nested deepest: the K loops of the register-blocked
# contractions (Q K^T, P V), inside the key-tile, row-block and column-block
# loops; --all takes every multiply-add loop (the softmax's polynomial exp
# too). A spill or reload in a hot loop (LLVM's "Spill" / "Reload" /
# "Folded Reload" comments) means its live values did not fit the register
# file: the check fails and names the loop. It also fails when the file
# has no such loop at all, so that a change in LLVM's comments cannot make
# it pass vacuously.
#
#   check_spills.py FILE.s [--all] [--min-fmas N] [--block-fmas N]
#
# With --block-fmas N the hot loops are instead the innermost loops that
# issue exactly N multiply-adds per iteration, at any depth, and none of
# the softmax exp's rounding, shifts, clamps or compares: the K steps of
# register blocks with N accumulator registers (the depth of a block's K
# loop depends on how many column blocks the tile has, which differs
# between Q K^T and P V when the key tile and the head size differ).
#
# prints one line per multiply-add loop ("loop BB0_12 depth 6: 8 fma, 0
# spills, 0 reloads, 0 prefetches, 19 instructions [8 vfmadd231ps]", hot
# ones marked, the multiply-add instructions counted by mnemonic) and a summary; exit 1 on a
# spill or reload in a hot loop. With --baseline (the same kernel built for
# static shapes) the hot loops may have at most --max-extra instructions
# more than the baseline's: what a shape-generic build may add.
#
# ===----------------------------------------------------------------------=== #

import argparse
import re
import sys

# Floating-point multiply-adds: x86 FMA3 (packed and scalar), AVX-512 BF16
# and AMX dot products, AArch64 FMLA/FMLS/FMADD (and SVE's FMAD/FMSB) and
# BF16 dot products.
FMA = re.compile(
    r"^\s+(v?f(n)?m(add|sub)\d{3}[ps][sdh]|vdpbf16ps|tdpbf16ps|"
    r"fml[as]|fn?m(add|sub)|fn?m(ad|sb)|bfdot|bfmmla|bfmlal[bt])\b")
HEADER = re.compile(r"This (Inner )?Loop Header: Depth=(\d+)")
IN_LOOP = re.compile(r"in Loop: Header=(BB\d+_\d+) Depth=(\d+)")
# What the polynomial exp of the softmax rows issues and a register block's
# K step never does: rounding, int/float conversions, clamps and compares.
# (Not shifts: a K step that reads bf16 widens each row by one, the exp's
# exponent shift comes with its clamps.)
EXP_ONLY = re.compile(
    r"^\s+(v?cvt\w*|v?round\w*|frint\w*|fcvt\w*|[su]cvtf|"
    r"v?(max|min)[ps][sdh]|f(max|min)\w*|vcmp\w*|fcm\w*)\b")
# Software prefetches (x86 PREFETCHh, AArch64 PRFM): attn-prefetch-streams
# in the projections' K loops.
PREFETCH = re.compile(r"^\s+(prefetch\w*|prfm)\b")
SPILL = re.compile(r"Spill\b")
RELOAD = re.compile(r"Reload\b")


def new_loop():
    """The counts of a loop not read yet."""
    return {"fma": 0, "spill": 0, "reload": 0, "size": 0, "exp_only": 0,
            "prefetch": 0}


def parse(lines):
    """Maps each loop header (BBf_n) to its depth, whether it is innermost,
    and its instructions' count and fma / spill / reload counts."""
    loops = {}
    current = None  # (header name) of the block being read
    block = None
    for line in lines:
        label = re.match(r"^\.?L?(BB\d+_\d+):", line)
        if label:
            block = label.group(1)
            current = None
        elif re.match(r"^\s*(#|//) %bb\.\d+:", line):
            block = None
            current = None
        header = HEADER.search(line)
        if header and block:
            current = block
            loop = loops.setdefault(block, new_loop())
            loop["depth"] = int(header.group(2))
            loop["inner"] = header.group(1) is not None
            continue
        member = IN_LOOP.search(line)
        if member:
            current = member.group(1)
            loops.setdefault(current, new_loop())
            continue
        if current is None or not line.startswith(("\t", " ")):
            continue
        code = line.split("#")[0].split("//")[0]
        if not code.strip():
            continue
        loop = loops[current]
        if not code.strip().startswith("."):  # an instruction, not a directive
            loop["size"] += 1
        fma = FMA.match(code)
        if fma:
            loop["fma"] += 1
            mnemonics = loop.setdefault("mnemonics", {})
            name = fma.group(1)
            mnemonics[name] = mnemonics.get(name, 0) + 1
        if PREFETCH.match(code):
            loop["prefetch"] += 1
        if EXP_ONLY.match(code):
            loop["exp_only"] += 1
        if SPILL.search(line):
            loop["spill"] += 1
        if RELOAD.search(line):
            loop["reload"] += 1
    return loops


def innermost_fma_loops(path, min_fmas):
    with open(path) as f:
        loops = parse(f.read().splitlines())
    return {name: loop for name, loop in loops.items()
            if loop.get("inner") and loop["fma"] >= min_fmas}


def hot_loops(loops, block_fmas, all_loops=False):
    deepest = max(loop["depth"] for loop in loops.values())
    # A register block's K loop: exactly its accumulator count of
    # multiply-adds and none of the exp's other instructions (EXP_ONLY: a
    # row of the softmax's exp can issue as many multiply-adds).
    return {name: loop for name, loop in loops.items()
            if all_loops or (loop["fma"] == block_fmas and not loop["exp_only"]
                             if block_fmas else loop["depth"] == deepest)}


def by_place(loops):
    """Loops deepest first, then by multiply-adds (the printing order)."""
    return sorted(loops.items(), key=lambda item: (-item[1]["depth"], -item[1]["fma"]))


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("asm")
    p.add_argument("--all", action="store_true",
                   help="every multiply-add loop is hot, not only the deepest")
    p.add_argument("--min-fmas", type=int, default=1,
                   help="multiply-adds that make an innermost loop count")
    p.add_argument("--block-fmas", type=int,
                   help="hot loops: the innermost ones with exactly this many "
                        "multiply-adds, at any depth")
    p.add_argument("--baseline",
                   help="assembly of the same kernel for static shapes: each hot "
                        "loop is compared with the baseline's hot loop at the same "
                        "place (deepest first), and may have at most --max-extra "
                        "more instructions (a dynamic trip count's compare, a "
                        "stride in a register), not per-element index math")
    p.add_argument("--max-extra", type=int, default=2)
    args = p.parse_args()
    fmaLoops = innermost_fma_loops(args.asm, args.min_fmas)
    if not fmaLoops:
        print(f"error: no innermost loop with {args.min_fmas} or more "
              f"multiply-adds in {args.asm} (is it verbose assembly?)")
        return 1
    hot = hot_loops(fmaLoops, args.block_fmas, args.all)
    if not hot:
        print(f"error: no innermost loop with exactly {args.block_fmas} "
              f"multiply-adds in {args.asm}")
        return 1
    baseline = []
    if args.baseline:
        base = innermost_fma_loops(args.baseline, args.min_fmas)
        baseline = [loop for _, loop in by_place(hot_loops(base, args.block_fmas, args.all))]
        if len(baseline) != len(hot):
            print(f"error: {len(hot)} hot loops, the baseline has {len(baseline)}")
            return 1
    bad = 0
    for name, loop in by_place(fmaLoops):
        kinds = ", ".join(f"{n} {m}" for m, n in sorted(loop["mnemonics"].items()))
        print(f"{'hot ' if name in hot else ''}loop {name} depth "
              f"{loop['depth']}: {loop['fma']} fma, {loop['spill']} spills, "
              f"{loop['reload']} reloads, {loop['prefetch']} prefetches, "
              f"{loop['size']} instructions [{kinds}]")
        if name in hot and (loop["spill"] or loop["reload"]):
            bad += 1
        if name in hot and baseline:
            base = baseline.pop(0)
            extra = loop["size"] - base["size"]
            print(f"  baseline: {base['size']} instructions, {extra:+d}"
                  f"{' (too many)' if extra > args.max_extra else ''}")
            if extra > args.max_extra or loop["fma"] != base["fma"]:
                bad += 1
    most = max(loop["fma"] for loop in hot.values())
    print(f"{len(hot)} hot loops (the largest {most} fma), "
          f"{bad} with spills or reloads{' or more instructions' if args.baseline else ''}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
