#!/usr/bin/env python3
# ===- test/lib/frontend_fixture.py - linalg IR made by a real frontend -===#
#
# Exports a PyTorch module to ONNX (torch.onnx.export), imports it with
# IREE's ONNX importer (iree-import-onnx, torch-mlir's) and lowers it to
# linalg on tensors with IREE's own input pipeline (iree-compile
# --iree-input-type=onnx --compile-to=input), then unwraps IREE's calling
# convention: the body of the `$async` util.func, with its
# hal.tensor.import / barrier / export ops replaced by the tensors they
# carry, as a func.func over tensors. Nothing else of the IR is touched.
#
#   frontend_fixture.py NAME OUT.mlir [--inputs DIR]   (needs torch, onnx,
#                                                      iree-base-compiler)
#
# NAME is one of MODULES below. With --inputs, also writes the module's
# random inputs and torch's result as .npy files (arg0.npy, ..., torch.npy)
# for attn-run --inputs/--expected.
#
# ===--------------------------------------------------------------------===#
import argparse
import math
import os
import re
import subprocess
import sys
import tempfile


def _modules():
    import torch

    class Attention(torch.nn.Module):
        """softmax(q k^T / sqrt(d)) v, as a model's code writes it."""

        def forward(self, q, k, v):
            s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
            return torch.matmul(torch.softmax(s, dim=-1), v)

    class Block(torch.nn.Module):
        """A transformer block's self-attention: the in-projections, the
        head split, the attention written out, the head merge and the
        out-projection (what torch.nn.MultiheadAttention computes)."""

        def __init__(self, embed=64, heads=4):
            super().__init__()
            self.heads = heads
            self.qkv = torch.nn.Linear(embed, 3 * embed)
            self.out = torch.nn.Linear(embed, embed)

        def forward(self, x):
            n, l, e = x.shape
            q, k, v = self.qkv(x).chunk(3, dim=-1)
            split = lambda t: t.reshape(n, l, self.heads, e // self.heads).transpose(1, 2)
            q, k, v = split(q), split(k), split(v)
            s = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(e // self.heads))
            o = torch.matmul(torch.softmax(s, dim=-1), v)
            return self.out(o.transpose(1, 2).reshape(n, l, e))

    class CausalMasked(torch.nn.Module):
        """Causal attention written with masked_fill of torch.triu."""

        def forward(self, q, k, v):
            n = q.shape[-2]
            s = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(q.shape[-1])
            s = s.masked_fill(torch.triu(torch.ones(n, n, dtype=torch.bool), 1),
                              float("-inf"))
            return torch.matmul(torch.softmax(s, dim=-1), v)

    class Sdpa(torch.nn.Module):
        """torch's SDPA with is_causal, as its ONNX export decomposes it (q
        and k each scaled by the root of the scale, an additive mask)."""

        def forward(self, q, k, v):
            return torch.nn.functional.scaled_dot_product_attention(
                q, k, v, is_causal=True)

    qkv = lambda: tuple(torch.randn(2, 4, 40, 16) for _ in range(3))
    torch.manual_seed(0)
    return {
        "causal-masked-fill": (CausalMasked(), qkv),
        "sdpa-causal": (Sdpa(), qkv),
        "attention": (Attention(), lambda: (torch.randn(2, 4, 64, 32),
                                            torch.randn(2, 4, 80, 32),
                                            torch.randn(2, 4, 80, 32))),
        "block": (Block(), lambda: (torch.randn(2, 48, 64),)),
        # benchmarks/frontend.py's: BERT-base's head size at 512 tokens.
        "block-large": (Block(embed=256, heads=4),
                        lambda: (torch.randn(1, 512, 256),)),
    }


def _unwrap(text):
    """The `$async` util.func of IREE's ABI as a func.func over tensors."""
    match = re.search(r"util\.func public @(\w+)\$async\(.*?\n(.*?)\n  \}\n",
                      text, re.S)
    if not match:
        sys.exit("frontend_fixture: no $async function in IREE's output")
    name, body = match.group(1), match.group(2)
    args, renames, kept, result = [], {}, [], None
    for line in body.split("\n"):
        imp = re.match(r"\s*(%\S+) = hal\.tensor\.import .*-> (tensor<[^>]*>)", line)
        bar = re.match(r"\s*(%\S+) = hal\.tensor\.barrier join\((%\S+) : (tensor<[^>]*>)\)", line)
        exp = re.match(r"\s*(%\S+) = hal\.tensor\.export (%\S+) ", line)
        ret = re.match(r"\s*util\.return (%\S+) ", line)
        if imp:
            renames[imp.group(1)] = "%%in%d" % len(args)
            args.append("%%in%d: %s" % (len(args), imp.group(2)))
        elif bar:
            renames[bar.group(1)] = bar.group(2)
            result = bar.group(3)
        elif exp:
            renames[exp.group(1)] = exp.group(2)
        elif ret:
            value = ret.group(1)
            while value in renames:
                value = renames[value]
            kept.append("    return %s : %s" % (value, result))
        else:
            kept.append(line)
    out = "\n".join(kept)
    for old, new in renames.items():
        out = re.sub(re.escape(old) + r"(?![\w#])", new, out)
    return "func.func @%s(%s) -> %s {\n%s\n}\n" % (name, ", ".join(args), result, out)


def export(name, workdir):
    """Runs the frontend on module `name` in `workdir`: returns the linalg
    module (text, IREE's ABI unwrapped), the torch module, its inputs and
    the path of the ONNX file."""
    import torch

    module, make_inputs = _modules()[name]
    inputs = make_inputs()
    bindir = os.path.dirname(sys.executable)
    onnx_path = os.path.join(workdir, name + ".onnx")
    torch.onnx.export(module, inputs, onnx_path, dynamo=False, opset_version=17)
    torch_mlir = os.path.join(workdir, name + ".torch.mlir")
    input_mlir = os.path.join(workdir, name + ".input.mlir")
    subprocess.check_call([os.path.join(bindir, "iree-import-onnx"), onnx_path,
                           "-o", torch_mlir])
    subprocess.check_call([os.path.join(bindir, "iree-compile"),
                           "--iree-input-type=onnx", "--compile-to=input",
                           torch_mlir, "-o", input_mlir])
    header = ("// Made by test/lib/frontend_fixture.py %s (torch %s, "
              "iree-base-compiler): torch.onnx.export, iree-import-onnx,\n"
              "// iree-compile --iree-input-type=onnx --compile-to=input, "
              "IREE's ABI unwrapped.\n" % (name, torch.__version__))
    return header + _unwrap(open(input_mlir).read()), module, inputs, onnx_path


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("name", choices=sorted(_modules()))
    parser.add_argument("out")
    parser.add_argument("--inputs")
    opts = parser.parse_args()
    import numpy as np
    import torch

    with tempfile.TemporaryDirectory() as tmp:
        ir, module, inputs, _ = export(opts.name, tmp)
    with open(opts.out, "w") as f:
        f.write(ir)
    if opts.inputs:
        os.makedirs(opts.inputs, exist_ok=True)
        for i, t in enumerate(inputs):
            np.save(os.path.join(opts.inputs, "arg%d.npy" % i), t.numpy())
        with torch.no_grad():
            np.save(os.path.join(opts.inputs, "torch.npy"), module(*inputs).numpy())


if __name__ == "__main__":
    main()
