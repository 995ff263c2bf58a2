#!/usr/bin/env python3
# ===- frontend.py - a frontend's transformer block, raised or not ---------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# A PyTorch transformer block's self-attention (in-projection, head split,
# softmax(q k^T / sqrt(d)) v written out, head merge, out-projection) run
# through a real frontend (torch.onnx.export, IREE's ONNX importer and
# input pipeline: test/lib/frontend_fixture.py) and compiled by attn-mlir
# with attn-raise-attention (the default) and without (raise-attention=0),
# timed interleaved in one process against the torch module itself and ONNX
# Runtime on the same ONNX file (where installed). Outputs are compared with
# torch's.
#
#   build/venv/bin/python3 benchmarks/frontend.py [--module block-large] [--repeat 10]
#
# ===----------------------------------------------------------------------=== #

import argparse
import os
import sys
import tempfile

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from run import ROOT, cpu_model, relative_error, time_interleaved  # noqa: E402

sys.path.insert(0, os.path.join(ROOT, "test", "lib"))
import frontend_fixture  # noqa: E402


def main():
    p = argparse.ArgumentParser(description="a frontend's block, raised or not")
    p.add_argument("--module", default="block-large")
    p.add_argument("--repeat", type=int, default=10)
    p.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = p.parse_args()
    sys.path.insert(0, os.path.join(args.build, "python_packages"))
    import attn_mlir
    import torch

    with tempfile.TemporaryDirectory() as tmp:
        exported = frontend_fixture.export(args.module, tmp)
        ir, module, inputs, onnx_path = (exported.ir, exported.module, exported.torch_inputs,
                                         exported.onnx_path)
        arrays, expected = exported.inputs, exported.expected
        runs, results = {}, {}
        for name, pipeline in (("attn-mlir (raised)", ""),
                               ("attn-mlir (not raised)", "raise-attention=0")):
            function = attn_mlir.compile(ir, pipeline=pipeline)
            results[name] = function(*arrays)
            runs[name] = lambda function=function: function(*arrays)

        def run_torch():
            with torch.no_grad():
                module(*inputs)
        runs["torch"] = run_torch
        try:
            import onnxruntime
            session = onnxruntime.InferenceSession(
                onnx_path, providers=["CPUExecutionProvider"])
            feed = {i.name: a for i, a in zip(session.get_inputs(), arrays)}
            results["onnxruntime"] = session.run(None, feed)[0]
            runs["onnxruntime"] = lambda: session.run(None, feed)
        except ImportError:
            print("# onnxruntime: not installed")
        best = time_interleaved(runs, args.repeat)

    print(f"# CPU: {cpu_model(args.build)}; torch {torch.__version__} with "
          f"{torch.get_num_threads()} threads")
    print(f"# {args.module}: input {tuple(inputs[0].shape)}")
    print("| peer | ms | peer time / raised time | rel. error vs torch |")
    print("|---|---|---|---|")
    raised = best["attn-mlir (raised)"]
    for name, seconds in best.items():
        error = (f"{relative_error(results[name], expected):.1e}"
                 if name in results else "-")
        print(f"| {name} | {seconds * 1e3:.2f} | {seconds / raised:.2f}x | {error} |")


if __name__ == "__main__":
    main()
