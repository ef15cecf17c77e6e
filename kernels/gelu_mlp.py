"""
GPT-2's MLP with its GELU computed in the epilogues of the matmuls around it (cuBLASLt's GELU_AUX and DGELU):

    y = gelu(x W1^T) W2^T,   gelu's tanh form: gelu(h) = h (1 + tanh(k (h + c h^3))) / 2

Forward:  h = x W1^T, g = gelu(h)     one product; its epilogue writes g, and h (aux) for the backward
          y = g W2^T
Backward: dW2 = dy^T g
          dh = (dy W2) * gelu'(h)      one product; its epilogue reads h and multiplies, in fp32 before rounding
          dW1 = dh^T x,  dx = dh W1
What goes: the GELU passes between the products (forward: read h, write g; backward: read dg and h, write dh), so
both passes of a layer measure faster than cuBLAS's products with our GELU kernel between them at GPT-2's shapes
(12 x 1024 tokens, C 768, hidden 3072, bf16; docs/perf-notes.md). Every product is matmul_plan's (kernels/matmul.py:
the fastest of cuBLASLt's algorithms, measured once per problem); the weight gradients are summed in fp32 and
written in the weights' dtype. Kept for the backward, as PyTorch's MLP keeps them: x, h, g. The two epilogue
products that gelu_mlp is built from are ops of their own (gelu_linear_fwd, dgelu_matmul).

Constraints: cuBLASLt's GELU is the tanh form only, so this is the MLP of a model that uses it (GPT-2's own
activation; nanoGPT's is the exact erf form). No biases. x (..., C); W1 (hidden, C) and W2 (C, hidden), cast to x's
dtype (autocast's, under autocast) in the forward and again in the backward, or read from copies in that dtype that
the caller keeps (`copies`: kernels/linear.py's matmul_copy, which AdamW writes with the weights), which need no
cast;
PyTorch's path casts the weights (a copy is its weight's cast, bit for bit). Products that cuBLASLt cannot take
(CPU, fp32, rows not 16-byte aligned) are PyTorch's product followed by PyTorch's GELU, the same math
(kernels/matmul.py: matmul_plan's fallback).
"""
from typing import Tuple

import torch
import torch.nn.functional as F

from kernels.backend import use_triton, as_rows, for_compile
from kernels.matmul import matmul


def gelu_mlp_ref(x, w_fc, w_proj):
    return F.linear(F.gelu(F.linear(x, w_fc), approximate="tanh"), w_proj)


def _fake_gelu_linear(x, w):
    return x.new_empty(x.shape[0], w.shape[0]), x.new_empty(x.shape[0], w.shape[0])


# opaque to torch.compile: cuBLASLt is called through ctypes
@for_compile("gelu_linear_fwd", _fake_gelu_linear, traceable=False)
def gelu_linear_fwd(x: torch.Tensor, w: torch.Tensor) -> Tuple[torch.Tensor, torch.Tensor]:
    """(h, g): h = x w^T and g = gelu(h), GELU's tanh form, by one product with GELU in its epilogue; x (N, C) and
    w (hidden, C) in one dtype."""
    h, g = _fake_gelu_linear(x, w)
    matmul(x, w.T, g, epilogue="gelu", aux=h)
    return h, g


@for_compile("dgelu_matmul", lambda dy, w, h: torch.empty_like(h), traceable=False)
def dgelu_matmul(dy: torch.Tensor, w: torch.Tensor, h: torch.Tensor) -> torch.Tensor:
    """(dy w) * gelu'(h), GELU's tanh form, by one product with GELU's derivative in its epilogue: the gradient of h
    for g = gelu(h) followed by g w^T, given the latter's output gradient dy (N, C); w (C, hidden), h (N, hidden)."""
    return matmul(dy, w, torch.empty_like(h), epilogue="dgelu", aux=h)


def _fake_fwd(x, w_fc, w_proj):
    N, C, H = *x.shape, w_fc.shape[0]
    return x.new_empty(N, C), x.new_empty(N, H), x.new_empty(N, H)


# opaque to torch.compile: cuBLASLt is called through ctypes
@for_compile("gelu_mlp_fwd", _fake_fwd, traceable=False)
def gelu_mlp_fwd(x: torch.Tensor, w_fc: torch.Tensor, w_proj: torch.Tensor,
                 ) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(y, g, h) for x (N, C), w_fc (hidden, C), w_proj (C, hidden), all in one dtype."""
    if x.dim() != 2 or w_fc.shape != (w_proj.shape[1], x.shape[1]) or w_proj.shape != (x.shape[1], w_fc.shape[0]):
        raise ValueError(f"gelu_mlp: shapes x {tuple(x.shape)}, w_fc {tuple(w_fc.shape)}, w_proj "
                         f"{tuple(w_proj.shape)} are not (N, C), (hidden, C), (C, hidden)")
    if not x.dtype == w_fc.dtype == w_proj.dtype:
        raise ValueError(f"gelu_mlp: x, w_fc, w_proj in {x.dtype}, {w_fc.dtype}, {w_proj.dtype}, not one dtype")
    h, g = gelu_linear_fwd(x, w_fc)
    return matmul(g, w_proj.T, x.new_empty(x.shape)), g, h


def _fake_bwd(dy, x, h, g, w_fc, w_proj, weight_dtype):
    return torch.empty_like(x), w_fc.new_empty(w_fc.shape, dtype=weight_dtype), \
        w_proj.new_empty(w_proj.shape, dtype=weight_dtype)


@for_compile("gelu_mlp_bwd", _fake_bwd, traceable=False)
def gelu_mlp_bwd(dy: torch.Tensor, x: torch.Tensor, h: torch.Tensor, g: torch.Tensor, w_fc: torch.Tensor,
                 w_proj: torch.Tensor, weight_dtype: torch.dtype) -> Tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
    """(dx, dW1, dW2) given y's gradient dy (N, C) and what the forward kept; the weight gradients summed in fp32
    and written in weight_dtype (the stored weights' dtype: no cast pass after the product)."""
    if dy.shape != x.shape or dy.dtype != x.dtype:
        raise ValueError(f"gelu_mlp_bwd: dy {tuple(dy.shape)} {dy.dtype} for x {tuple(x.shape)} {x.dtype}")
    dx, dw_fc, dw_proj = _fake_bwd(dy, x, h, g, w_fc, w_proj, weight_dtype)
    matmul(dy.T, g, dw_proj)
    dh = dgelu_matmul(dy, w_proj, h)
    matmul(dh.T, x, dw_fc)
    return matmul(dh, w_fc, dx), dw_fc, dw_proj


def _in_dtype(w, copy, dtype):
    """w in dtype for a product: its kept copy, or a cast (autocast's own casts are not kept past the forward: the
    backward casts again, as model.cast_for_matmul says)."""
    return w.to(dtype) if copy is None else copy


class GeluMLPFunction(torch.autograd.Function):

    @staticmethod
    def forward(ctx, x, w_fc, w_proj, fc_copy=None, proj_copy=None):
        if w_fc.dtype != w_proj.dtype:  # their gradients are written in that one dtype
            raise ValueError(f"gelu_mlp: w_fc in {w_fc.dtype}, w_proj in {w_proj.dtype}")
        y, g, h = gelu_mlp_fwd(x, _in_dtype(w_fc, fc_copy, x.dtype), _in_dtype(w_proj, proj_copy, x.dtype))
        ctx.save_for_backward(x, h, g, w_fc, w_proj, fc_copy, proj_copy)
        return y

    @staticmethod
    def backward(ctx, dy):
        x, h, g, w_fc, w_proj, fc_copy, proj_copy = ctx.saved_tensors
        # both weight gradients made (a frozen weight in an MLP is rare), each returned only if asked for
        dx, dw_fc, dw_proj = gelu_mlp_bwd(dy.to(x.dtype), x, h, g, _in_dtype(w_fc, fc_copy, x.dtype),
                                          _in_dtype(w_proj, proj_copy, x.dtype), w_fc.dtype)
        return dx, dw_fc if ctx.needs_input_grad[1] else None, dw_proj if ctx.needs_input_grad[2] else None, None, None


def gelu_mlp(x, w_fc, w_proj, backend="auto", copies=(None, None)):
    """F.linear(F.gelu(F.linear(x, w_fc), approximate='tanh'), w_proj), under autocast as F.linear runs it: by the
    epilogue-fused products above or PyTorch's ops, as `backend` says (see kernels/backend.py); copies: the weights'
    kept copies in x's dtype, or None each (the module's docstring)."""
    if not use_triton("gelu_mlp", backend, x, w_fc, w_proj):
        return gelu_mlp_ref(x, w_fc, w_proj)
    if torch.is_autocast_enabled(x.device.type):
        x = x.to(torch.get_autocast_dtype(x.device.type))
    elif not x.dtype == w_fc.dtype == w_proj.dtype:  # as F.linear refuses them
        raise ValueError(f"gelu_mlp: x, w_fc, w_proj in {x.dtype}, {w_fc.dtype}, {w_proj.dtype} outside autocast")
    for w, copy in zip((w_fc, w_proj), copies):
        if copy is not None and (copy.dtype != x.dtype or copy.shape != w.shape or copy.device != w.device):
            raise ValueError(f"gelu_mlp: a copy {copy.dtype} {tuple(copy.shape)} on {copy.device} for a weight "
                             f"{tuple(w.shape)} on {w.device}: a copy has its weight's shape and device, x's dtype "
                             f"{x.dtype}")
    with torch.autocast(x.device.type, enabled=False):  # the products write into given outputs, in x's dtype
        return GeluMLPFunction.apply(as_rows(x), w_fc, w_proj, *copies).view(*x.shape[:-1], w_proj.shape[0])
