# ===- peers.py - the implementations the benchmark compares ---------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# Each peer turns one problem (a Config and its float32 Q, K, V) into a
# zero-argument callable that computes the attention output and returns it
# as a NumPy array. Preparation (compilation, uploads, packing the inputs
# into the peer's layout) happens before timing; only the callable is timed.
# A peer whose package is missing reports why instead of failing the run.
#
# ===----------------------------------------------------------------------=== #

import ctypes
import dataclasses
import math
import os
import subprocess
import tempfile

import numpy as np


@dataclasses.dataclass(frozen=True)
class Config:
    """One attention problem: Q [B, Hq, Sq, D], K/V [B, Hkv, Skv, D]."""

    B: int
    Hq: int
    Hkv: int
    Sq: int
    Skv: int
    D: int
    causal: bool

    @property
    def kind(self):
        if self.Sq == 1:
            return "decode"
        if self.Hq != self.Hkv:
            return "gqa"
        return "causal" if self.causal else "full"

    def visible_pairs(self):
        """(query, key) pairs that take part: causal is top-left aligned
        (query i sees keys 0..i), as torch's is_causal."""
        if not self.causal:
            return self.Sq * self.Skv
        rows = np.minimum(np.arange(1, self.Sq + 1), self.Skv)
        return int(rows.sum())

    def flops(self):
        """Multiply-adds of Q K^T and P V over the visible pairs, times 2."""
        return 4 * self.B * self.Hq * self.D * self.visible_pairs()

    def bytes_read(self, element_size=4):
        """Bytes every correct evaluation reads or writes at least once:
        Q, K, V and the output (what bounds a decode step)."""
        q = self.B * self.Hq * self.Sq * self.D
        kv = 2 * self.B * self.Hkv * self.Skv * self.D
        return element_size * (2 * q + kv)

    def label(self):
        heads = f"H={self.Hq}" if self.Hq == self.Hkv else f"Hq={self.Hq} Hkv={self.Hkv}"
        return (f"B={self.B} {heads} Sq={self.Sq} Skv={self.Skv} D={self.D}"
                f"{' causal' if self.causal else ''}")


class Unavailable(Exception):
    """The peer cannot run this problem here; the message says why."""


def repeat_kv(x, groups):
    return np.repeat(x, groups, axis=1) if groups > 1 else x


class NumPy:
    """Naive attention in float32 NumPy: the whole score matrix in memory."""

    name = "numpy"
    max_score_bytes = 4 << 30

    def prepare(self, cfg, q, k, v):
        score_bytes = 4 * cfg.B * cfg.Hq * cfg.Sq * cfg.Skv
        if score_bytes > self.max_score_bytes:
            raise Unavailable(f"score matrix would need {score_bytes / 2**30:.1f} GiB")
        groups = cfg.Hq // cfg.Hkv
        kt = np.ascontiguousarray(repeat_kv(k, groups).transpose(0, 1, 3, 2))
        v = repeat_kv(v, groups)
        scale = np.float32(1 / math.sqrt(cfg.D))
        hidden = None
        if cfg.causal:
            hidden = ~np.tril(np.ones((cfg.Sq, cfg.Skv), bool))

        def run():
            s = q @ kt
            s *= scale
            if hidden is not None:
                s[..., hidden] = -np.inf
            s -= s.max(-1, keepdims=True)
            np.exp(s, out=s)
            s /= s.sum(-1, keepdims=True)
            return s @ v

        return run


class Torch:
    """torch.nn.functional.scaled_dot_product_attention on CPU tensors."""

    name = "torch"

    def prepare(self, cfg, q, k, v):
        try:
            import torch
        except ImportError:
            raise Unavailable("torch is not installed")
        torch.set_num_threads(os.cpu_count())
        tq, tk, tv = (torch.from_numpy(x) for x in (q, k, v))
        gqa = cfg.Hq != cfg.Hkv
        sdpa = torch.nn.functional.scaled_dot_product_attention

        def run():
            with torch.no_grad():
                return sdpa(tq, tk, tv, is_causal=cfg.causal, enable_gqa=gqa).numpy()

        return run


class OnnxRuntime:
    """ONNX Runtime's CPU kernel for the ONNX Attention operator (opset 23)."""

    name = "onnxruntime"

    def prepare(self, cfg, q, k, v):
        try:
            import onnx
            import onnxruntime as ort
            from onnx import TensorProto, helper
        except ImportError:
            raise Unavailable("onnx and onnxruntime are not both installed")
        shapes = {"Q": q.shape, "K": k.shape, "V": v.shape}
        inputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, list(s))
                  for n, s in shapes.items()]
        output = helper.make_tensor_value_info(
            "Y", TensorProto.FLOAT, [cfg.B, cfg.Hq, cfg.Sq, cfg.D])
        node = helper.make_node("Attention", ["Q", "K", "V"], ["Y"],
                                is_causal=int(cfg.causal))
        model = helper.make_model(helper.make_graph([node], "sdpa", inputs, [output]),
                                  opset_imports=[helper.make_opsetid("", 23)])
        model.ir_version = 10
        options = ort.SessionOptions()
        options.intra_op_num_threads = os.cpu_count()
        session = ort.InferenceSession(model.SerializeToString(), options,
                                       providers=["CPUExecutionProvider"])
        feeds = {"Q": q, "K": k, "V": v}
        return lambda: session.run(None, feeds)[0]


class IreeAttentionOp:
    """IREE's llvm-cpu compilation of its own attention op
    (iree_linalg_ext.attention). Causal masking is an explicit boolean mask
    operand and GQA repeats the K/V heads: the op has neither built in.
    Opt-in (--peers iree-attention-op): on this CPU it ran about 15x slower
    than IREE on the plain linalg form (the `iree` peer)."""

    name = "iree-attention-op"

    def prepare(self, cfg, q, k, v):
        groups = cfg.Hq // cfg.Hkv
        operands = [q, repeat_kv(k, groups), repeat_kv(v, groups)]
        if cfg.causal:
            operands.append(np.tril(np.ones((cfg.Sq, cfg.Skv), bool)))
        return iree_callable(self.source(cfg), operands)

    @staticmethod
    def source(cfg):
        def t(s, d, e="f32"):
            return f"tensor<{cfg.B}x{cfg.Hq}x{s}x{d}x{e}>"

        dims = "(d0, d1, d2, d3, d4, d5)"  # b, h, m, n, k1, k2
        maps = [f"affine_map<{dims} -> ({r})>" for r in
                ("d0, d1, d2, d4", "d0, d1, d5, d4", "d0, d1, d5, d3", "")]
        args = [f"%q: {t(cfg.Sq, cfg.D)}", f"%k: {t(cfg.Skv, cfg.D)}",
                f"%v: {t(cfg.Skv, cfg.D)}"]
        operands = ["%q", "%k", "%v", "%scale"]
        types = [t(cfg.Sq, cfg.D), t(cfg.Skv, cfg.D), t(cfg.Skv, cfg.D), "f32"]
        if cfg.causal:
            mask = f"tensor<{cfg.Sq}x{cfg.Skv}xi1>"
            args.append(f"%mask: {mask}")
            operands.append("%mask")
            types.append(mask)
            maps.append(f"affine_map<{dims} -> (d2, d5)>")
        maps.append(f"affine_map<{dims} -> (d0, d1, d2, d3)>")
        out = t(cfg.Sq, cfg.D)
        # The generic form: the op's custom syntax changed across releases.
        return f"""
func.func @sdpa({', '.join(args)}) -> {out} {{
  %scale = arith.constant {1 / math.sqrt(cfg.D)} : f32
  %init = tensor.empty() : {out}
  %r = "iree_linalg_ext.attention"({', '.join(operands)}, %init)
      <{{indexing_maps = [{', '.join(maps)}]}}> ({{
    ^bb0(%score: f32):
      iree_linalg_ext.yield %score : f32
  }}) : ({', '.join(types)}, {out}) -> {out}
  return %r : {out}
}}
"""


class Iree:
    """IREE's llvm-cpu compiler on the unfused attention in upstream linalg
    (this project's reference lowering, `attn-opt --attn-reference-pipeline`:
    matmul, softmax, matmul over the whole score matrix), which IREE tiles,
    fuses and vectorises itself. GQA is given to it with the K/V heads
    repeated: the reference lowering's `h floordiv group` indexing map sent
    IREE down a path about 40x slower."""

    name = "iree"
    max_score_bytes = 4 << 30

    def __init__(self, attn_opt):
        self.attn_opt = attn_opt

    def prepare(self, cfg, q, k, v):
        score_bytes = 4 * cfg.B * cfg.Hq * cfg.Sq * cfg.Skv
        if score_bytes > self.max_score_bytes:
            raise Unavailable(f"score matrix would need {score_bytes / 2**30:.1f} GiB")
        groups = cfg.Hq // cfg.Hkv
        dense = dataclasses.replace(cfg, Hkv=cfg.Hq)
        linalg = subprocess.run([self.attn_opt, "--attn-reference-pipeline"],
                                input=AttnMlir.source(dense), capture_output=True,
                                text=True, check=True).stdout
        return iree_callable(linalg, [q, repeat_kv(k, groups), repeat_kv(v, groups)])


def iree_callable(source, operands):
    """Compiles `source` (its function @sdpa) for this CPU with IREE, uploads
    the operands once and returns the call (synchronised by to_host)."""
    try:
        import iree.compiler as compiler
        import iree.runtime as runtime
    except ImportError:
        raise Unavailable("iree-base-compiler and iree-base-runtime are not installed")
    vmfb = compiler.compile_str(source, target_backends=["llvm-cpu"],
                                extra_args=["--iree-llvmcpu-target-cpu=host"])
    config = runtime.Config("local-task")
    context = runtime.SystemContext(config=config)
    context.add_vm_module(runtime.VmModule.copy_buffer(context.instance, vmfb))
    function = context.modules.module["sdpa"]
    device = [runtime.asdevicearray(config.device, x) for x in operands]
    return lambda: function(*device).to_host()


def memref_descriptor(pointer, shape, strides=None):
    """A memref descriptor (docs/CpuABI.md) of any rank for the buffer at
    `pointer` (host memory, or device memory for CUDA code), to pass by
    reference to a `_mlir_ciface_` function; row-major unless `strides`
    (in elements) say otherwise."""
    rank = len(shape)
    if strides is None:
        strides, step = [], 1
        for size in reversed(shape):
            strides.insert(0, step)
            step *= size
    fields = [("allocated", ctypes.c_void_p), ("aligned", ctypes.c_void_p),
              ("offset", ctypes.c_int64), ("sizes", ctypes.c_int64 * rank),
              ("strides", ctypes.c_int64 * rank)]
    descriptor = type(f"MemRef{rank}D", (ctypes.Structure,), {"_fields_": fields})
    return descriptor(pointer, pointer, 0, (ctypes.c_int64 * rank)(*shape),
                      (ctypes.c_int64 * rank)(*strides))


def memref(array):
    """The descriptor of a C-contiguous NumPy array."""
    assert array.flags.c_contiguous
    return memref_descriptor(array.ctypes.data, array.shape,
                             [s // array.itemsize for s in array.strides])


class AttnMlir:
    """This project: the module compiled by attnc to a shared library (the
    default CPU pipeline) and called through its C ABI."""

    name = "attn-mlir"

    def __init__(self, attnc, pipeline=None, workdir=None, autotune=False, dtype="f32",
                 mcpu=None):
        self.attnc = attnc
        self.pipeline = pipeline
        # Code for another CPU than the host (--mcpu): what an AVX2 machine
        # would run, timed on an AVX-512 host that also executes it.
        self.mcpu = mcpu
        self.autotune = autotune
        # f32 takes float32 arrays; bf16 takes uint16 arrays of bf16 bits.
        self.dtype = dtype
        self.workdir = workdir or tempfile.mkdtemp(prefix="attn-bench-")
        self.name = ("attn-mlir" + (" autotuned" if autotune else "")
                     + (f" [{pipeline}]" if pipeline else "")
                     + (f" --mcpu={mcpu}" if mcpu else ""))

    @staticmethod
    def source(cfg, dtype="f32"):
        def t(h, s):
            return f"tensor<{cfg.B}x{h}x{s}x{cfg.D}x{dtype}>"

        q, kv = t(cfg.Hq, cfg.Sq), t(cfg.Hkv, cfg.Skv)
        causal = " causal" if cfg.causal else ""
        return f"""
func.func @sdpa(%q: {q}, %k: {kv}, %v: {kv}) -> {q} {{
  %init = tensor.empty() : {q}
  %o = attn.sdpa %q, %k, %v outs(%init){causal} : {q}, {kv}, {kv} -> {q}
  return %o : {q}
}}
"""

    def compile(self, cfg):
        stem = os.path.join(self.workdir, f"sdpa-{len(os.listdir(self.workdir))}")
        with open(stem + ".mlir", "w") as f:
            f.write(self.source(cfg, self.dtype))
        command = [self.attnc, stem + ".mlir", "--emit=shared", "-o", stem + ".so"]
        if self.pipeline:
            command.append(f"--cpu-pipeline={self.pipeline}")
        if self.mcpu:
            command.append(f"--mcpu={self.mcpu}")
        if self.autotune:
            # The default tuning cache: a problem timed once is reused by
            # later runs.
            command.append("--autotune")
        subprocess.run(command, check=True)
        return ctypes.CDLL(stem + ".so")

    def prepare(self, cfg, q, k, v):
        function = self.compile(cfg)._mlir_ciface_sdpa
        shape = (cfg.B, cfg.Hq, cfg.Sq, cfg.D)
        out = (np.full(shape, np.nan, np.float32) if self.dtype == "f32"
               else np.full(shape, 0x7FC0, np.uint16))  # bf16 NaN
        descriptors = [memref(x) for x in (q, k, v, out)]
        pointers = [ctypes.byref(d) for d in descriptors]

        def run():
            function(*pointers)
            return out

        return run


class AttnMlirPaged(AttnMlir):
    """This project on a paged KV cache: K and V written into pages of
    `page_size` keys (attn.gather_pages' layouts: "nhd" [num_pages,
    page_size, Hkv, D] or "hnd" [num_pages, Hkv, page_size, D]) at random
    places among the cache's pages, read through a page table, with
    kv_lens = Skv: the same attention as the contiguous problem, as a
    serving system keeps its cache."""

    def __init__(self, attnc, page_size, layout="nhd", **kwargs):
        super().__init__(attnc, **kwargs)
        self.page_size = page_size
        self.layout = layout
        self.name = f"attn-mlir paged ({page_size}-key pages, {layout})"

    def source(self, cfg, dtype="f32"):
        P = self.page_size
        pages = -(-cfg.Skv // P)
        num_pages = cfg.B * pages
        q = f"tensor<{cfg.B}x{cfg.Hq}x{cfg.Sq}x{cfg.D}x{dtype}>"
        shape = (num_pages, P, cfg.Hkv, cfg.D) if self.layout == "nhd" else (
            num_pages, cfg.Hkv, P, cfg.D)
        cache = f"tensor<{'x'.join(map(str, shape))}x{dtype}>"
        layout = "" if self.layout == "nhd" else f" layout = <{self.layout}>"
        table = f"tensor<{cfg.B}x{pages}xi32>"
        kv = f"tensor<{cfg.B}x{cfg.Hkv}x{pages * P}x{cfg.D}x{dtype}>"
        lens = f"tensor<{cfg.B}xi32>"
        causal = " causal" if cfg.causal else ""
        return f"""
func.func @sdpa(%q: {q}, %kc: {cache}, %vc: {cache}, %table: {table}, %lens: {lens}) -> {q} {{
  %k = attn.gather_pages %kc[%table]{layout} : {cache}, {table} -> {kv}
  %v = attn.gather_pages %vc[%table]{layout} : {cache}, {table} -> {kv}
  %init = tensor.empty() : {q}
  %o = attn.sdpa %q, %k, %v kv_lens(%lens : {lens}) outs(%init){causal} : {q}, {kv}, {kv} -> {q}
  return %o : {q}
}}
"""

    def prepare(self, cfg, q, k, v):
        function = self.compile(cfg)._mlir_ciface_sdpa
        P = self.page_size
        pages = -(-cfg.Skv // P)
        order = np.random.default_rng(1).permutation(cfg.B * pages)
        table = order.reshape(cfg.B, pages).astype(np.int32)

        def paginate(x):
            padded = np.zeros((cfg.B, cfg.Hkv, pages * P, cfg.D), x.dtype)
            padded[:, :, :cfg.Skv] = x
            # [B, H, pages, P, D] -> [B, pages, P, H, D] (nhd) or [B,
            # pages, H, P, D] (hnd), page by page.
            blocks = padded.reshape(cfg.B, cfg.Hkv, pages, P, cfg.D)
            order = (0, 2, 3, 1, 4) if self.layout == "nhd" else (0, 2, 1, 3, 4)
            blocks = np.transpose(blocks, order)
            cache = np.empty((cfg.B * pages,) + blocks.shape[2:], x.dtype)
            cache[table.reshape(-1)] = blocks.reshape(cache.shape)
            return cache

        kc, vc = paginate(k), paginate(v)
        lens = np.full(cfg.B, cfg.Skv, np.int32)
        out = np.full((cfg.B, cfg.Hq, cfg.Sq, cfg.D), np.nan, np.float32)
        # The descriptors hold bare pointers: the arrays stay referenced
        # by the closure for as long as it runs.
        arrays = (q, kc, vc, table, lens, out)
        descriptors = [memref(x) for x in arrays]
        pointers = [ctypes.byref(d) for d in descriptors]

        def run():
            function(*pointers)
            return arrays[-1]

        return run


# Peers by name; each factory takes the build directory.
PEERS = {
    "numpy": lambda build: NumPy(),
    "torch": lambda build: Torch(),
    "onnxruntime": lambda build: OnnxRuntime(),
    "iree": lambda build: Iree(os.path.join(build, "bin", "attn-opt")),
    "iree-attention-op": lambda build: IreeAttentionOp(),
    # The same compiler with attnc --autotune: the autotuned sizes against
    # the target model's, in one run.
    "attn-mlir-autotuned": lambda build: AttnMlir(os.path.join(build, "bin", "attnc"),
                                                  autotune=True),
    # The same problems on paged caches (serving's layouts), 16-key pages.
    "attn-mlir-paged": lambda build: AttnMlirPaged(os.path.join(build, "bin", "attnc"),
                                                   page_size=16),
    "attn-mlir-paged-hnd": lambda build: AttnMlirPaged(
        os.path.join(build, "bin", "attnc"), page_size=16, layout="hnd"),
}
DEFAULT_PEERS = ["numpy", "torch", "onnxruntime", "iree"]
