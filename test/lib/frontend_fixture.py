#!/usr/bin/env python3
# ===- test/lib/frontend_fixture.py - linalg IR made by a real frontend -===#
#
# Runs one of the frontends users compile attention from and returns the
# linalg on tensors it writes, untouched but for IREE's calling convention:
#
# - onnx: torch.onnx.export, IREE's ONNX importer (iree-import-onnx,
#   torch-mlir's) and IREE's input pipeline (iree-compile
#   --iree-input-type=onnx --compile-to=input);
# - torch-mlir: torch-mlir's FX importer lowered to linalg-on-tensors
#   (torch_mlir.fx.export_and_import);
# - turbine: iree-turbine's aot.export (torch dialect) and IREE's input
#   pipeline (--iree-input-type=torch);
# - jax: the same computation written with jax.numpy, jax.jit(...).lower
#   (StableHLO) and IREE's input pipeline (--iree-input-type=stablehlo).
#
# IREE's convention is unwrapped: the body of the `$async` util.func (its
# hal.tensor.import / barrier / export ops replaced by the tensors they
# carry) or the plain util.func, as a func.func over tensors, the globals
# it loads (weights) as constants.
#
#   frontend_fixture.py NAME OUT.mlir [--frontend F] [--inputs DIR]
#   (needs torch and the frontend's packages: scripts/deps.sh installs them)
#
# NAME is one of the modules of _modules() below (hf-bert and hf-gpt2:
# transformers' own attention layers; not for the jax frontend). With --inputs, also writes the module's
# random inputs and the frontend's own result as .npy files (arg0.npy, ...,
# expected.npy) for attn-run --inputs/--expected.
#
# ===--------------------------------------------------------------------===#
import argparse
import collections
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

    def hugging_face(kind):
        """A Hugging Face attention layer as transformers writes it (its
        eager code, random weights from a small config), made when asked
        for: BERT's self-attention; GPT-2's with the causal mask its model
        passes (finfo.min above the diagonal, added)."""
        from transformers import BertConfig, GPT2Config
        from transformers.models.bert.modeling_bert import BertSelfAttention
        from transformers.models.gpt2.modeling_gpt2 import GPT2Attention

        class Layer(torch.nn.Module):
            def __init__(self):
                super().__init__()
                if kind == "bert":
                    config = BertConfig(hidden_size=64, num_attention_heads=4,
                                        attention_probs_dropout_prob=0.0)
                    config._attn_implementation = "eager"
                    self.attention = BertSelfAttention(config)
                else:
                    config = GPT2Config(n_embd=64, n_head=4, attn_pdrop=0.0, resid_pdrop=0.0)
                    config._attn_implementation = "eager"
                    self.attention = GPT2Attention(config, layer_idx=0)

            def forward(self, x):
                if kind == "bert":
                    return self.attention(x)[0]
                n = x.shape[1]
                mask = torch.full((n, n), torch.finfo(x.dtype).min).triu(1)[None, None]
                return self.attention(x, attention_mask=mask)[0]
        return Layer().eval()

    qkv = lambda: tuple(torch.randn(2, 4, 40, 16) for _ in range(3))
    torch.manual_seed(0)
    return {
        # Made when asked for (importing transformers takes seconds).
        "hf-bert": (lambda: hugging_face("bert"), lambda: (torch.randn(2, 48, 64),)),
        "hf-gpt2": (lambda: hugging_face("gpt2"), lambda: (torch.randn(2, 48, 64),)),
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


def _jax_function(name, module):
    """The computation of torch module `name` written with jax.numpy (the
    Block's weights taken from `module`), for the jax frontend."""
    import jax
    import jax.numpy as jnp

    def attention(q, k, v, causal=False):
        s = q @ jnp.swapaxes(k, -1, -2) / math.sqrt(q.shape[-1])
        if causal:
            n = q.shape[-2]
            s = jnp.where(jnp.triu(jnp.ones((n, n), bool), 1), -jnp.inf, s)
        return jax.nn.softmax(s, axis=-1) @ v

    if name == "attention":
        return attention
    if name == "causal-masked-fill":
        return lambda q, k, v: attention(q, k, v, causal=True)
    if name.startswith("block"):
        weights = [jnp.asarray(p.detach().numpy()) for p in
                   (module.qkv.weight, module.qkv.bias, module.out.weight, module.out.bias)]

        def block(x):
            w_in, b_in, w_out, b_out = weights
            n, l, e = x.shape
            q, k, v = jnp.split(x @ w_in.T + b_in, 3, axis=-1)
            split = lambda t: t.reshape(n, l, module.heads, -1).transpose(0, 2, 1, 3)
            o = attention(split(q), split(k), split(v))
            return o.transpose(0, 2, 1, 3).reshape(n, l, e) @ w_out.T + b_out
        return block
    sys.exit("frontend_fixture: no jax version of %s" % name)


def _globals_as_constants(text, body):
    """`body` with each util.global.load of a global the module defines with
    an initial value (`util.global private @g = dense...`) as an
    arith.constant of that value."""
    values = dict(re.findall(r"util\.global private @(\S+) = (dense\S*<.*?>) :", text))

    def constant(match):
        return "%s = arith.constant %s : %s" % (match.group(1), values[match.group(2)],
                                               match.group(3))
    return re.sub(r"(%\S+) = util\.global\.load @(\S+) : (\S+)", constant, body)


def _resources(text):
    """The module's dialect resources section (weights as blobs), or ""."""
    at = text.find("{-#")
    return text[at:] if at >= 0 else ""


def _unwrap(text):
    """The entry util.func of IREE's output as a func.func over tensors:
    the `$async` one of IREE's ABI (torch and ONNX inputs), or a plain one
    on tensors (StableHLO's)."""
    plain = re.search(r"util\.func public @(\w+)\((%[^)]*)\) -> \((.*?)\) \{\n(.*?)\n  \}\n",
                      text, re.S) or re.search(
        r"util\.func public @(\w+)\((%[^)]*)\) -> (tensor<[^>]*>) \{\n(.*?)\n  \}\n",
        text, re.S)
    if plain and "$async" not in text:
        name, args, results, body = plain.groups()
        body = re.sub(r"util\.return ", "return ", body)
        return "func.func @%s(%s) -> (%s) {\n%s\n}\n" % (name, args, results, body)
    match = re.search(r"util\.func public @(\w+)\$async\(.*?\n(.*?)\n  \}\n",
                      text, re.S)
    if not match:
        sys.exit("frontend_fixture: no entry function in IREE's output")
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
    out = _globals_as_constants(text, "\n".join(kept))
    for old, new in renames.items():
        out = re.sub(re.escape(old) + r"(?![\w#])", new, out)
    return "func.func @%s(%s) -> %s {\n%s\n}\n" % (name, ", ".join(args), result, out)


def _input_pipeline(source, input_type, workdir, name):
    """IREE's input pipeline on `source` (a file): its output unwrapped,
    with the source's resources (weights)."""
    bindir = os.path.dirname(sys.executable)
    input_mlir = os.path.join(workdir, name + ".input.mlir")
    subprocess.check_call([os.path.join(bindir, "iree-compile"),
                           "--iree-input-type=" + input_type, "--compile-to=input",
                           source, "-o", input_mlir])
    text = open(input_mlir).read()
    return _unwrap(text) + _resources(text)


# What export returns: the linalg module (text, IREE's ABI unwrapped), the
# torch module and its inputs, the inputs as NumPy arrays, the frontend's
# own result on them, and the ONNX file (onnx frontend, else None).
Exported = collections.namedtuple(
    "Exported", "ir module torch_inputs inputs expected onnx_path")


def export(name, workdir, frontend="onnx"):
    """Runs `frontend` on module `name` in `workdir` (an Exported)."""
    import numpy as np
    import torch

    module, make_inputs = _modules()[name]
    if not isinstance(module, torch.nn.Module):
        torch.manual_seed(0)
        module = module()
    inputs = make_inputs()
    with torch.no_grad():
        expected = module(*inputs).numpy()
    versions = "torch %s" % torch.__version__
    onnx_path = None
    if frontend == "torch-mlir":
        from torch_mlir import fx
        ir = str(fx.export_and_import(module, *inputs, output_type="linalg-on-tensors"))
        how = "torch_mlir.fx.export_and_import(output_type=linalg-on-tensors)"
    elif frontend == "turbine":
        from iree.turbine import aot
        torch_mlir = os.path.join(workdir, name + ".torch.mlir")
        with open(torch_mlir, "w") as f:
            f.write(str(aot.export(module, args=inputs).mlir_module))
        ir = _input_pipeline(torch_mlir, "torch", workdir, name)
        how = "iree.turbine.aot.export, iree-compile --iree-input-type=torch --compile-to=input"
    elif frontend == "jax":
        import jax
        function = _jax_function(name, module)
        arrays = [x.numpy() for x in inputs]
        stablehlo = os.path.join(workdir, name + ".stablehlo.mlir")
        with open(stablehlo, "w") as f:
            f.write(jax.jit(function).lower(*arrays).as_text())
        expected = np.asarray(jax.jit(function)(*arrays))
        ir = _input_pipeline(stablehlo, "stablehlo", workdir, name)
        versions = "jax %s" % jax.__version__
        how = "jax.jit(...).lower, iree-compile --iree-input-type=stablehlo --compile-to=input"
    else:
        ir, how, onnx_path = _onnx(module, inputs, name, workdir)
    header = ("// Made by test/lib/frontend_fixture.py %s --frontend %s (%s): %s,\n"
              "// IREE's ABI unwrapped.\n" % (name, frontend, versions, how))
    return Exported(header + ir, module, inputs, [x.numpy() for x in inputs], expected,
                    onnx_path)


def _onnx(module, inputs, name, workdir):
    """The onnx frontend's linalg, how it was made and the ONNX file."""
    import torch

    bindir = os.path.dirname(sys.executable)
    onnx_path = os.path.join(workdir, name + ".onnx")
    torch.onnx.export(module, inputs, onnx_path, dynamo=False, opset_version=17)
    torch_mlir = os.path.join(workdir, name + ".torch.mlir")
    input_mlir = os.path.join(workdir, name + ".input.mlir")
    subprocess.check_call([os.path.join(bindir, "iree-import-onnx"), onnx_path,
                           "-o", torch_mlir])
    return (_input_pipeline(torch_mlir, "onnx", workdir, name),
            "torch.onnx.export, iree-import-onnx, iree-compile --iree-input-type=onnx "
            "--compile-to=input", onnx_path)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("name", choices=sorted(_modules()))
    parser.add_argument("out")
    parser.add_argument("--frontend", default="onnx",
                        choices=["onnx", "torch-mlir", "turbine", "jax"])
    parser.add_argument("--inputs")
    opts = parser.parse_args()
    import numpy as np

    with tempfile.TemporaryDirectory() as tmp:
        exported = export(opts.name, tmp, opts.frontend)
    with open(opts.out, "w") as f:
        f.write(exported.ir)
    if opts.inputs:
        os.makedirs(opts.inputs, exist_ok=True)
        for i, x in enumerate(exported.inputs):
            np.save(os.path.join(opts.inputs, "arg%d.npy" % i), x)
        np.save(os.path.join(opts.inputs, "expected.npy"), exported.expected)


if __name__ == "__main__":
    main()
