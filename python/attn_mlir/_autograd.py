# ===- attn_mlir/_autograd.py - attention under torch autograd -------------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# scaled_dot_product_attention and flex_attention as two torch custom ops:
# the forward (attn.sdpa with its row log-sum-exp) and the backward
# (attn.sdpa_grad), joined by a registered autograd formula; functional.linear
# (_linear) and nn.MultiheadAttention's attention core on its projections
# (_heads) the same way. flex_attention's traced modifiers travel as their
# IR text, the tensors they capture as inputs (which get no gradient).
# Fake-tensor implementations give their output shapes, so torch.compile
# traces a call as one op instead of breaking its graph there. Eager calls
# run the same computations and backwards as torch.autograd.Functions
# (ops().sdpa, .linear, .heads choose): the custom-op dispatcher's Python
# layers cost about 60 microseconds a call. This module never imports torch
# itself: the ops are defined as soon as torch is loaded (at once if it is,
# else right after its import, define_with_torch), because a custom op
# cannot be defined while torch.compile traces: the first call of a fresh
# process under torch.compile(fullgraph=True) found them undefined.
#
# ===----------------------------------------------------------------------=== #

import importlib.abc
import importlib.util
import sys

import numpy as np

from . import _arrays, _ir, _linear

_ops = None


class _AfterTorchImport(importlib.abc.MetaPathFinder):
    """Finds nothing itself: when `import torch` starts, it lets the other
    finders find torch and has its loader define the ops once torch's
    module has run."""

    def find_spec(self, name, path, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        loader = spec.loader if spec is not None else None
        if loader is None or not hasattr(loader, "exec_module"):
            return spec
        exec_module = loader.exec_module

        def exec_then_define(module):
            exec_module(module)
            ops()

        loader.exec_module = exec_then_define
        return spec


def define_with_torch():
    """Defines the custom ops now if torch is loaded, else right after it
    is imported (this package's import calls it)."""
    if "torch" in sys.modules:
        ops()
    elif not any(isinstance(finder, _AfterTorchImport) for finder in sys.meta_path):
        sys.meta_path.insert(0, _AfterTorchImport())


def _tracked(*tensors):
    """Whether autograd records a call on `tensors` (None entries ignored)."""
    return _arrays._torch().is_grad_enabled() and any(
        x is not None and x.requires_grad for x in tensors)


def refuse_gradients(function, *tensors):
    """Raises for a call of `function`, which has no backward, that
    autograd would record: a result without a gradient would silently cut
    the graph."""
    if any(_arrays.is_torch(x) for x in tensors) and _tracked(*tensors):
        raise ValueError(f"{function} computes no gradients: call it under "
                         "torch.no_grad() or on tensors that do not require grad")


def wanted(query, key, value, attn_mask):
    """Whether a call on torch tensors goes through the custom ops: when
    autograd records it, or when torch.compile is tracing it."""
    tracked = _tracked(query, key, value)
    if tracked and attn_mask is not None and attn_mask.requires_grad:
        raise ValueError("attn_mask requires grad, but attn-mlir computes no gradient "
                         "for masks: pass attn_mask.detach()")
    return tracked or _arrays._torch().compiler.is_compiling()


def wanted_linear(input, weight, bias):
    """wanted() for functional.linear's arguments."""
    return _tracked(input, weight, bias) or _arrays._torch().compiler.is_compiling()


def ops():
    """The custom ops (a namespace with sdpa_forward and sdpa_backward)."""
    global _ops
    if _ops is None:
        _ops = _define()
    return _ops


def _define():
    from types import SimpleNamespace
    from typing import List, Optional, Tuple

    import torch
    from torch import Tensor

    from . import _plan, _varlen

    def prepare(query, key, value, attn_mask, dropout_p, is_causal, scale,
                enable_gqa, window, alignment, captures, capture_names, seed):
        # The forward and the backward must drop the same elements: a seed
        # each would draw for itself would differ.
        if dropout_p > 0 and seed is None:
            raise ValueError("attn_mlir::sdpa_forward/sdpa_backward with dropout "
                             "need the seed (scaled_dot_product_attention draws one)")
        call = _plan.prepare(query, key, value, attn_mask, dropout_p, is_causal,
                             scale, enable_gqa, window, alignment, seed=seed)
        call.add_captures(named(captures, capture_names))
        return call

    def named(captures, capture_names):
        """(name, array) of a custom op's captured tensors, whose names come
        joined by commas (a custom op takes no list of strings)."""
        return zip(filter(None, capture_names.split(",")), captures)

    # Each custom op is made of a plain function that the eager
    # autograd.Function below calls too.
    def run_sdpa(query: Tensor, key: Tensor, value: Tensor,
                 attn_mask: Optional[Tensor], dropout_p: float, is_causal: bool,
                 scale: Optional[float], enable_gqa: bool,
                 window: Optional[List[int]], alignment: str, target: str,
                 dynamic: Optional[bool], regions: str, captures: List[Tensor],
                 capture_names: str, seed: Optional[int]) -> Tuple[Tensor, Tensor]:
        call = prepare(query, key, value, attn_mask, dropout_p, is_causal, scale,
                       enable_gqa, window, alignment, captures, capture_names, seed)
        return call.run(regions, target, dynamic, lse=True)

    sdpa_forward = torch.library.custom_op("attn_mlir::sdpa_forward", mutates_args=())(
        run_sdpa)

    @sdpa_forward.register_fake
    def _(query, key, value, *rest):
        stat = torch.float64 if query.dtype == torch.float64 else torch.float32
        return (query.new_empty(query.shape[:-1] + value.shape[-1:]),
                query.new_empty(query.shape[:-1], dtype=stat))

    def run_sdpa_grad(out_grad: Tensor, query: Tensor, key: Tensor, value: Tensor,
                      out: Tensor, lse: Tensor, attn_mask: Optional[Tensor],
                      dropout_p: float, is_causal: bool, scale: Optional[float],
                      enable_gqa: bool, window: Optional[List[int]], alignment: str,
                      target: str, dynamic: Optional[bool], regions: str,
                      captures: List[Tensor], capture_names: str,
                      seed: Optional[int]) -> Tuple[Tensor, Tensor, Tensor]:
        call = prepare(query, key, value, attn_mask, dropout_p, is_causal, scale,
                       enable_gqa, window, alignment, captures, capture_names, seed)
        return call.run_grad(out, out_grad.contiguous(), lse, regions, target, dynamic)

    sdpa_backward = torch.library.custom_op("attn_mlir::sdpa_backward", mutates_args=())(
        run_sdpa_grad)

    @sdpa_backward.register_fake
    def _(out_grad, query, key, value, *rest):
        # Contiguous like the compiled results (empty_like would keep the
        # strides of a transposed view).
        return tuple(x.new_empty(x.shape) for x in (query, key, value))

    def setup_context(ctx, inputs, output):
        query, key, value, attn_mask, *params, captures, capture_names, seed = inputs
        out, lse = output
        ctx.save_for_backward(query, key, value, out, lse, attn_mask, *captures)
        ctx.params, ctx.capture_names, ctx.seed = params, capture_names, seed
        ctx.mark_non_differentiable(lse)

    def sdpa_grads(ctx, out_grad, run_backward):
        """(dq, dk, dv) through `run_backward` (the custom op or its
        function) from what setup_context saved."""
        query, key, value, out, lse, attn_mask, *captures = ctx.saved_tensors
        return run_backward(out_grad, query, key, value, out, lse, attn_mask, *ctx.params,
                            captures, ctx.capture_names, ctx.seed)

    def backward(ctx, out_grad, lse_grad):
        grads = sdpa_grads(ctx, out_grad, sdpa_backward)
        captures = ctx.saved_tensors[6:]
        # One entry per forward input: none for the mask, the attributes,
        # the captured tensors (a list for their list) and the seed.
        return (*grads, None, *([None] * len(ctx.params)), [None] * len(captures),
                None, None)

    sdpa_forward.register_autograd(backward, setup_context=setup_context)

    # Named after the custom ops: autograd names a graph's nodes after the
    # class ("attn_mlir_sdpa_forwardBackward").
    class attn_mlir_sdpa_forward(torch.autograd.Function):
        """sdpa_forward's computation and backward for eager calls; the
        captured tensors come last, one argument each."""

        @staticmethod
        def forward(ctx, query, key, value, attn_mask, dropout_p, is_causal, scale,
                    enable_gqa, window, alignment, target, dynamic, regions, capture_names,
                    seed, *captures):
            inputs = (query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa,
                      window, alignment, target, dynamic, regions, list(captures),
                      capture_names, seed)
            output = run_sdpa(*inputs)
            setup_context(ctx, inputs, output)
            return output

        @staticmethod
        def backward(ctx, out_grad, lse_grad):
            grads = sdpa_grads(ctx, out_grad, run_sdpa_grad)
            return (*grads, *([None] * (12 + len(ctx.saved_tensors[6:]))))

    # varlen_attention: the packed sequences padded around attn.sdpa and
    # attn.sdpa_grad (_varlen). One custom op for eager calls and
    # torch.compile alike: packed training batches are large, the
    # dispatcher's overhead is small beside them.
    def varlen_call(q, k, v, cu_seqlens_q, cu_seqlens_k, padded, dropout_p, scale, causal,
                    window, captures, capture_names, seed):
        call = _varlen.prepare(q, k, v, cu_seqlens_q, cu_seqlens_k, _arrays.element(q),
                               _arrays.element(cu_seqlens_q), padded, dropout_p, scale,
                               causal, window, seed)
        call.add_captures(named(captures, capture_names))
        return call

    @torch.library.custom_op("attn_mlir::varlen_forward", mutates_args=())
    def varlen_forward(q: Tensor, k: Tensor, v: Tensor, cu_seqlens_q: Tensor,
                       cu_seqlens_k: Tensor, padded: List[int], dropout_p: float,
                       scale: Optional[float], causal: bool, window: Optional[List[int]],
                       regions: str, captures: List[Tensor], capture_names: str,
                       seed: Optional[int], target: str) -> Tuple[Tensor, Tensor]:
        call = varlen_call(q, k, v, cu_seqlens_q, cu_seqlens_k, padded, dropout_p, scale,
                           causal, window, captures, capture_names, seed)
        return call.run(regions, target, lse=True)

    @varlen_forward.register_fake
    def _(q, k, v, cu_seqlens_q, cu_seqlens_k, padded, *rest):
        stat = torch.float64 if q.dtype == torch.float64 else torch.float32
        return (q.new_empty(q.shape[:-1] + v.shape[-1:]),
                q.new_empty((cu_seqlens_q.shape[0] - 1, q.shape[1], padded[0]), dtype=stat))

    @torch.library.custom_op("attn_mlir::varlen_backward", mutates_args=())
    def varlen_backward(out_grad: Tensor, q: Tensor, k: Tensor, v: Tensor,
                        cu_seqlens_q: Tensor, cu_seqlens_k: Tensor, out: Tensor, lse: Tensor,
                        padded: List[int], dropout_p: float, scale: Optional[float],
                        causal: bool, window: Optional[List[int]], regions: str,
                        captures: List[Tensor], capture_names: str, seed: Optional[int],
                        target: str) -> Tuple[Tensor, Tensor, Tensor]:
        call = varlen_call(q, k, v, cu_seqlens_q, cu_seqlens_k, padded, dropout_p, scale,
                           causal, window, captures, capture_names, seed)
        return call.run_grad(out, out_grad.contiguous(), lse, regions, target)

    @varlen_backward.register_fake
    def _(out_grad, q, k, v, *rest):
        return tuple(x.new_empty(x.shape) for x in (q, k, v))

    def varlen_setup_context(ctx, inputs, output):
        q, k, v, cu_q, cu_k, *params, captures, capture_names, seed, target = inputs
        out, lse = output
        ctx.save_for_backward(q, k, v, cu_q, cu_k, out, lse, *captures)
        ctx.params, ctx.rest = params, (capture_names, seed, target)
        ctx.mark_non_differentiable(lse)

    def varlen_gradients(ctx, out_grad, lse_grad):
        q, k, v, cu_q, cu_k, out, lse, *captures = ctx.saved_tensors
        capture_names, seed, target = ctx.rest
        grads = varlen_backward(out_grad, q, k, v, cu_q, cu_k, out, lse, *ctx.params,
                                captures, capture_names, seed, target)
        # One entry per forward input: none for the offsets, the options,
        # the captured tensors (a list for their list), names, seed, target.
        return (*grads, None, None, *([None] * len(ctx.params)), [None] * len(captures),
                None, None, None)

    varlen_forward.register_autograd(varlen_gradients, setup_context=varlen_setup_context)

    # functional.linear: the compiled product and its compiled backward.
    def run_linear(input: Tensor, weight: Tensor, bias: Optional[Tensor], target: str,
                   dynamic: Optional[bool]) -> Tensor:
        return _linear.forward(input, weight, bias, target, dynamic)

    linear_forward = torch.library.custom_op("attn_mlir::linear_forward",
                                             mutates_args=())(run_linear)

    @linear_forward.register_fake
    def _(input, weight, bias, target, dynamic):
        _linear.check(input, weight, bias)
        return input.new_empty(input.shape[:-1] + weight.shape[:1])

    # Gradients not asked for come back as empty tensors (a custom op
    # returns tensors, not None).
    def run_linear_grad(out_grad: Tensor, input: Tensor, weight: Tensor, needs: List[bool],
                        target: str, dynamic: Optional[bool]) -> Tuple[Tensor, Tensor, Tensor]:
        grads = iter(_linear.backward(out_grad.contiguous(), input, weight, needs, target,
                                      dynamic))
        return tuple(next(grads) if need else input.new_empty(0) for need in needs)

    linear_backward = torch.library.custom_op("attn_mlir::linear_backward",
                                              mutates_args=())(run_linear_grad)

    @linear_backward.register_fake
    def _(out_grad, input, weight, needs, target, dynamic):
        shapes = (input.shape, weight.shape, weight.shape[:1])
        return tuple(input.new_empty(shape if need else (0,))
                     for shape, need in zip(shapes, needs))

    def linear_setup_context(ctx, inputs, output):
        input, weight, bias, target, dynamic = inputs
        ctx.save_for_backward(input, weight)
        ctx.has_bias, ctx.target, ctx.dynamic = bias is not None, target, dynamic

    def linear_grads(ctx, out_grad, run_backward):
        """The gradients of a linear call's inputs, those autograd asks for,
        through `run_backward` (the custom op or its function)."""
        input, weight = ctx.saved_tensors
        needs = [bool(n) for n in ctx.needs_input_grad[:3]]
        needs[2] = needs[2] and ctx.has_bias
        if not any(needs):
            return None, None, None, None, None
        grads = run_backward(out_grad, input, weight, needs, ctx.target, ctx.dynamic)
        return (*(g if need else None for g, need in zip(grads, needs)), None, None)

    linear_forward.register_autograd(
        lambda ctx, out_grad: linear_grads(ctx, out_grad, linear_backward),
        setup_context=linear_setup_context)

    # Named after the custom ops: autograd names a graph's nodes after the
    # class ("attn_mlir_linear_forwardBackward").
    class attn_mlir_linear_forward(torch.autograd.Function):
        """linear_forward's computation and backward for eager calls."""

        @staticmethod
        def forward(ctx, input, weight, bias, target, dynamic):
            linear_setup_context(ctx, (input, weight, bias, target, dynamic), None)
            return run_linear(input, weight, bias, target, dynamic)

        @staticmethod
        def backward(ctx, out_grad):
            return linear_grads(ctx, out_grad, run_linear_grad)

    # nn.MultiheadAttention's attention core on its projections' outputs
    # (_heads): `refs` holds (source, first column) of Q, K and V, flattened.
    def heads_call(sources, refs, heads, head_dim, mask, dropout_p, seed):
        from ._heads import HeadSplitCall
        call = HeadSplitCall(sources, list(zip(refs[0::2], refs[1::2])), heads, head_dim,
                             _arrays.element(sources[0]))
        if mask is not None:
            call.add_input("m", mask, _arrays.shape(mask), _arrays.element(mask), "v.vv")
        if dropout_p > 0:
            call.attrs.append(f"dropout = {_ir.float_literal(dropout_p)}")
            call.add_input("ds", np.array(seed, np.int64), (), "i64")
        return call

    def run_heads(sources: List[Tensor], refs: List[int], heads: int, head_dim: int,
                  mask: Optional[Tensor], dropout_p: float, seed: Optional[int],
                  target: str, dynamic: Optional[bool]) -> Tuple[Tensor, Tensor]:
        call = heads_call(sources, refs, heads, head_dim, mask, dropout_p, seed)
        return call.run(target, dynamic)

    heads_forward = torch.library.custom_op("attn_mlir::heads_forward", mutates_args=())(
        run_heads)

    @heads_forward.register_fake
    def _(sources, refs, heads, head_dim, *rest):
        query = sources[refs[0]]
        stat = torch.float64 if query.dtype == torch.float64 else torch.float32
        n, L = query.shape[:2]
        return (query.new_empty((n, L, heads * head_dim)),
                query.new_empty((n, heads, L), dtype=stat))

    def run_heads_grad(out_grad: Tensor, sources: List[Tensor], refs: List[int], heads: int,
                       head_dim: int, out: Tensor, lse: Tensor, mask: Optional[Tensor],
                       dropout_p: float, seed: Optional[int], target: str,
                       dynamic: Optional[bool]) -> List[Tensor]:
        call = heads_call(sources, refs, heads, head_dim, mask, dropout_p, seed)
        return call.run_grad(out, out_grad.contiguous(), lse, target, dynamic)

    heads_backward = torch.library.custom_op("attn_mlir::heads_backward",
                                             mutates_args=())(run_heads_grad)

    @heads_backward.register_fake
    def _(out_grad, sources, *rest):
        return [x.new_empty(x.shape) for x in sources]

    def heads_setup_context(ctx, inputs, output):
        sources, refs, heads, head_dim, mask, dropout_p, seed, target, dynamic = inputs
        out, lse = output
        ctx.save_for_backward(out, lse, mask, *sources)
        ctx.params = (refs, heads, head_dim)
        ctx.rest = (dropout_p, seed, target, dynamic)
        ctx.mark_non_differentiable(lse)

    def heads_grads(ctx, out_grad, run_backward):
        """The sources' gradients through `run_backward` (the custom op or
        its function) from what heads_setup_context saved."""
        out, lse, mask, *sources = ctx.saved_tensors
        return run_backward(out_grad, sources, *ctx.params, out, lse, mask, *ctx.rest)

    def heads_backward_formula(ctx, out_grad, lse_grad):
        return (heads_grads(ctx, out_grad, heads_backward), *([None] * 8))

    heads_forward.register_autograd(heads_backward_formula,
                                    setup_context=heads_setup_context)

    # Named after the custom op, as the two above.
    class attn_mlir_heads_forward(torch.autograd.Function):
        """heads_forward's computation and backward for eager calls; the
        sources come last, one argument each (autograd.Function tracks
        tensors passed as arguments, not inside a list)."""

        @staticmethod
        def forward(ctx, refs, heads, head_dim, mask, dropout_p, seed, target, dynamic,
                    *sources):
            inputs = (list(sources), refs, heads, head_dim, mask, dropout_p, seed, target,
                      dynamic)
            output = run_heads(*inputs)
            heads_setup_context(ctx, inputs, output)
            return output

        @staticmethod
        def backward(ctx, out_grad, lse_grad):
            return (*([None] * 8), *heads_grads(ctx, out_grad, run_heads_grad))

    # Eager calls skip the custom-op dispatcher's Python layers (about 60
    # microseconds a call, a tenth of N32 L10's attention core): the same
    # computation as an autograd.Function. Under torch.compile the custom
    # ops, which it traces as one op each.
    def sdpa_call(query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa,
                  window, alignment, target, dynamic, regions, captures, capture_names,
                  seed):
        if torch.compiler.is_compiling():
            return sdpa_forward(query, key, value, attn_mask, dropout_p, is_causal, scale,
                                enable_gqa, window, alignment, target, dynamic, regions,
                                captures, capture_names, seed)
        return attn_mlir_sdpa_forward.apply(
            query, key, value, attn_mask, dropout_p, is_causal, scale, enable_gqa, window,
            alignment, target, dynamic, regions, capture_names, seed, *captures)

    def linear_call(input, weight, bias, target, dynamic):
        if torch.compiler.is_compiling():
            return linear_forward(input, weight, bias, target, dynamic)
        return attn_mlir_linear_forward.apply(input, weight, bias, target, dynamic)

    def heads_forward_call(sources, refs, heads, head_dim, mask, dropout_p, seed, target,
                           dynamic):
        if torch.compiler.is_compiling():
            return heads_forward(sources, refs, heads, head_dim, mask, dropout_p, seed,
                                 target, dynamic)
        return attn_mlir_heads_forward.apply(refs, heads, head_dim, mask, dropout_p, seed,
                                             target, dynamic, *sources)

    return SimpleNamespace(sdpa_forward=sdpa_forward, sdpa_backward=sdpa_backward,
                           linear_forward=linear_forward, linear_backward=linear_backward,
                           heads_forward=heads_forward, heads_backward=heads_backward,
                           varlen_forward=varlen_forward, varlen_backward=varlen_backward,
                           sdpa=sdpa_call, linear=linear_call, heads=heads_forward_call,
                           varlen=varlen_forward)
