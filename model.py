"""
A GPT language model in one file, in two flavours chosen by GPTConfig.arch:
- 'gpt2':  LayerNorm (bias optional), learned positions, GELU MLP, multi-head attention.
- 'llama': RMSNorm, rotary positions, SwiGLU MLP, grouped-query attention (n_kv_head).

Each op runs the implementation a resolved map names, {op: 'triton' | 'torch'} (kernels/choose.py; GPT(config)
alone is PyTorch everywhere, nanoGPT's model); parameter names never depend on it. With targets, forward returns
(None, loss): the Triton loss never makes the (B, T, vocab) logits; without, the last position's logits. Unlike
nanoGPT, each norm takes the residual stream x and the last sublayer's output, not yet added, and returns
(norm(x + update), x + update): the add rides along with the norm's pass. Under autocast the block matrices'
products read copies that AdamW keeps in autocast's dtype (kernels/linear.py).
"""
import math
import inspect
import functools
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts

import kernels
from kernels.adamw import copy_weights, kept_copies
from kernels.choose import ARCH_OPS
from kernels.linear import linear, matmul_copy, matmul_dtype, keep_copies
from kernels.gelu import APPROXIMATIONS as GELU_FORMS
from kernels.rotary import rotary_tables
from kernels.linear_cross_entropy import model_chunk_bytes

@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304  # GPT-2's 50257 padded up to a multiple of 64
    n_layer: int = 12
    n_head: int = 12
    n_kv_head: int = None    # llama: key/value heads for grouped-query attention; None = n_head
    n_embd: int = 768
    dropout: float = 0.0
    bias: bool = True        # gpt2: bias in Linears and LayerNorms (llama has none)
    arch: str = 'gpt2'       # 'gpt2' | 'llama'
    rope_theta: float = 10000.0
    gelu_approximate: str = 'none'  # gpt2's GELU: 'none' (exact, erf) as nanoGPT, 'tanh' as GPT-2 itself
    mlp_hidden: int = None   # the MLP's width; None: 4 n_embd (GELU), about 8/3 n_embd (SwiGLU: as many weights)
    head_dim: int = None     # None: n_embd // n_head
    norm_eps: float = None   # None: 1e-5 (LayerNorm), 1e-6 (RMSNorm)
    tie_embeddings: bool = True  # the LM head is the token embedding (pretrained weights may have two)

    def __post_init__(self):
        if self.arch not in ARCH_OPS:
            raise ValueError(f"arch must be one of {tuple(ARCH_OPS)}, got {self.arch!r}")
        if self.gelu_approximate not in GELU_FORMS:
            raise ValueError(f"gelu_approximate must be one of {GELU_FORMS}, got {self.gelu_approximate!r}")
        kv_heads = self.n_kv_head = self.n_head if self.n_kv_head is None else self.n_kv_head
        if min(self.n_layer, self.n_head, kv_heads, self.n_embd, self.block_size) < 1 or self.n_head % kv_heads:
            raise ValueError("n_layer, n_head, n_kv_head, n_embd, block_size: each >= 1, n_kv_head a divisor of n_head")
        llama = self.arch == 'llama'
        self.bias = self.bias and not llama  # LLaMA-style blocks have no biases
        self.mlp_hidden = self.mlp_hidden or (64 * math.ceil(8 * self.n_embd / 3 / 64) if llama else 4 * self.n_embd)
        if self.head_dim is None and self.n_embd % self.n_head:  # (pretrained LLaMA-style models may set another)
            raise ValueError(f"n_embd={self.n_embd} is not a multiple of n_head={self.n_head}")
        self.head_dim = self.head_dim or self.n_embd // self.n_head
        self.norm_eps = (1e-6 if llama else 1e-5) if self.norm_eps is None else self.norm_eps  # (0 is transformers')

    @property
    def gelu_mlp(self):
        """Whether the MLP can be kernels.gelu_mlp (cuBLASLt's GELU epilogues: the tanh form, no bias)."""
        return self.arch == 'gpt2' and self.gelu_approximate == 'tanh' and not self.bias

RECOMPUTE = ('none', 'activation', 'mlp')  # remade in the backward: nothing; norms' and activations' outputs; each MLP

def cast_for_matmul(weight, x):
    """weight in autocast's dtype for a product with x, by Tensor.to: autocast's own cast stays cached until the
    region ends, which would hold a copy through the forward for a Function that casts again in its backward."""
    return weight.to(matmul_dtype(x) or weight.dtype)

@torch.no_grad()
def refresh_matmul_copies(model, incompatible_keys=None):
    """The copies kept for model's matrices made again from the weights (load_state_dict's post-hook)."""
    copy_weights(list(model.parameters()), kept_copies(model.parameters()))

def linear_weight_grads(ctx, dy2, x2, weight, bias_dtype, index):
    """F.linear's weight and bias gradients as autograd makes them, from dy2 (rows, out) and its input x2
    (rows, in); None where the Function's inputs at index and index + 1 ask for none."""
    dw = dy2.t().mm(x2).to(weight.dtype) if ctx.needs_input_grad[index] else None
    dbias = dy2.sum(0).to(bias_dtype) if ctx.needs_input_grad[index + 1] else None
    return dw, dbias

class LinearOfNorm(torch.autograd.Function):
    """F.linear(y, weight, bias) for (y, h) = norm(x + update), keeping h but not y, which F.linear would keep
    for its weight gradient: the norm's backward kernel writes y again in its own pass (recompute='activation').
    Returns the product, and h where there is an update. Triton norms only."""

    @staticmethod
    def forward(ctx, is_rms, eps, out_dtype, weight, bias, x, update, norm_weight, norm_bias):
        y, h, stats = kernels.norm.norm_fwd(x if update is None else update, None if update is None else x,
                                            norm_weight, norm_bias, eps, is_rms, out_dtype)
        h = x if update is None else h  # (B, T, C), the stream
        ctx.save_for_backward(weight, h, norm_weight, norm_bias, stats)
        ctx.is_rms, ctx.out_dtype, ctx.has_update = is_rms, out_dtype, update is not None
        ctx.bias_dtype = None if bias is None else bias.dtype
        out = F.linear(y, cast_for_matmul(weight, y), bias)
        return (out, h) if update is not None else out

    @staticmethod
    def backward(ctx, dy, dh_out=None):
        weight, h, norm_weight, norm_bias, stats = ctx.saved_tensors
        with torch.autocast(dy.device.type, enabled=False):  # as autograd runs F.linear's backward
            dy2 = dy.reshape(-1, dy.shape[-1])  # (B * T, out), in the dtype the forward's product ran in
            dnormed = dy2.mm(weight.to(dy.dtype)).view(h.shape).to(ctx.out_dtype)  # (B, T, C), y's gradient
            dh, dwdb, y = kernels.norm.norm_bwd_with_y(dnormed, dh_out, h, norm_weight, norm_bias, stats,
                                                       ctx.is_rms, ctx.out_dtype)
            dw, dbias = linear_weight_grads(ctx, dy2, y.view(dy2.shape[0], -1).to(dy.dtype), weight, ctx.bias_dtype, 3)
        dnw, dnb = kernels.norm.weight_grads(dwdb, norm_weight.dtype, None if norm_bias is None else norm_bias.dtype)
        return None, None, None, dw, dbias, dh, dh if ctx.has_update else None, dnw, dnb

class Norm(nn.Module):
    """LayerNorm (is_rms False) or RMSNorm, by the kernel or PyTorch, with the residual add fused."""

    def __init__(self, ndim, bias, backend, is_rms, eps):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None
        self.backend, self.is_rms, self.eps, self.op = backend, is_rms, eps, 'rms_norm' if is_rms else 'layer_norm'

    @staticmethod
    def of(config, impl):
        """The architecture's norm: LayerNorm for gpt2, RMSNorm for llama."""
        is_rms = config.arch == 'llama'
        return Norm(config.n_embd, config.bias, impl['rms_norm' if is_rms else 'layer_norm'], is_rms, config.norm_eps)

    def forward(self, x, update=None):
        """(norm(x + update), x + update); x itself as the stream where there is no update. Under autocast the
        output comes in autocast's dtype, for the matmul it feeds: one rounding either way, one pass fewer."""
        stream, residual = (x, None) if update is None else (update, x)
        if self.is_rms:
            out = kernels.rms_norm(stream, self.weight, self.eps, residual=residual, out_dtype=matmul_dtype(x),
                                   backend=self.backend)
        else:
            out = kernels.layer_norm(stream, self.weight, self.bias, self.eps, residual=residual,
                                     out_dtype=matmul_dtype(x), backend=self.backend)
        return out if update is not None else (out, x)  # with a residual the op returns (y, x + update)

    def linear(self, x, update, weight, bias, keep_output=True):
        """(F.linear(y, weight, bias), the stream) for (y, stream) = self(x, update). keep_output=False keeps the
        stream and not y for the backward (LinearOfNorm; the Triton norm only: PyTorch's keeps y either way)."""
        if keep_output or not kernels.norm.takes_triton(self.op, self.backend, x, update, self.weight, self.bias):
            y, x = self(x, update)
            return linear(y, weight, bias), x
        out_dtype = kernels.norm.output_dtype(self.op, x, update, matmul_dtype(x))  # as self(x, update) has it
        out = LinearOfNorm.apply(self.is_rms, self.eps, out_dtype, weight, bias, x, update, self.weight, self.bias)
        return out if update is not None else (out, x)

class CausalSelfAttention(nn.Module):

    def __init__(self, config, impl):
        super().__init__()
        self.n_head, self.n_kv_head = config.n_head, config.n_kv_head
        self.head_dim = config.head_dim
        # query, key and value projections in one matmul; k and v have n_kv_head heads
        self.c_attn = nn.Linear(config.n_embd, (self.n_head + 2 * self.n_kv_head) * self.head_dim, bias=config.bias)
        self.c_proj = nn.Linear(self.n_head * self.head_dim, config.n_embd, bias=config.bias)
        self.dropout = config.dropout
        self.resid_dropout = nn.Dropout(config.dropout)
        self.rotary_backend = impl.get('rotary')
        # 'auto': a run without autocast (fp32) goes to SDPA with one printed line (the kernel is bf16 and fp16)
        self.attention_backend = 'auto' if impl['attention'] == 'triton' else 'torch'

    def forward(self, qkv, rope=None):
        """qkv: c_attn's product, which the block makes with its first norm (Norm.linear)."""
        B, T, _ = qkv.size()
        nh, nkv = self.n_head, self.n_kv_head
        qkv = qkv.view(B, T, nh + 2 * nkv, self.head_dim)  # (B, T, nh + 2 nkv, hs): q, k, v heads
        if rope is not None:  # q and k turned, v copied along: still one tensor of that layout
            qkv = kernels.rotary_qkv(qkv, nh + nkv, *rope, backend=self.rotary_backend)
        # q, k, v read in place; their gradient comes back as one tensor of qkv's layout (no concatenation)
        y = kernels.flash_attention_qkv(qkv, nh, causal=True, dropout_p=self.dropout if self.training else 0.0,
                                        backend=self.attention_backend)  # (B, nh, T, hs)
        y = y.transpose(1, 2).contiguous().view(B, T, nh * self.head_dim)  # (B, T, nh * hs), heads side by side
        return self.resid_dropout(linear(y, self.c_proj.weight, self.c_proj.bias))

def activation(swiglu, approximate, backend, a, b):
    """The MLP's activation: swiglu(a), a = [gate, up], or gelu(a + b) with b c_fc's bias or None."""
    return kernels.swiglu(a, backend=backend) if swiglu else kernels.gelu(a, b, approximate, backend=backend)

class LinearOfActivation(torch.autograd.Function):
    """F.linear(activation(a, b), weight, bias), keeping the activation's inputs but not its output, which
    F.linear would keep for its weight gradient: the activation's backward kernel writes it again in its own
    pass (kernels.gelu_backward, kernels.swiglu_backward; recompute='activation')."""

    @staticmethod
    def forward(ctx, swiglu, approximate, backend, weight, bias, a, b):
        hidden = activation(swiglu, approximate, backend, a, b)
        ctx.save_for_backward(weight, a, b)
        ctx.swiglu, ctx.approximate, ctx.backend, ctx.hidden_dtype = swiglu, approximate, backend, hidden.dtype
        ctx.bias_dtype = None if bias is None else bias.dtype
        return F.linear(hidden, cast_for_matmul(weight, hidden), bias)

    @staticmethod
    def backward(ctx, dy):
        weight, a, b = ctx.saved_tensors
        with torch.autocast(dy.device.type, enabled=False):  # as autograd runs F.linear's backward
            dy2 = dy.reshape(-1, dy.shape[-1])  # (B * T, C), in the dtype the forward's product ran in
            d_hidden = dy2.mm(weight.to(dy.dtype)).view(*a.shape[:-1], -1).to(ctx.hidden_dtype)  # (B, T, hidden)
            if ctx.swiglu:
                (da, hidden), db = kernels.swiglu_backward(d_hidden, a, backend=ctx.backend), None
            else:
                da, db, hidden = kernels.gelu_backward(d_hidden, a, b, ctx.approximate, backend=ctx.backend)
            hidden = hidden.reshape(dy2.shape[0], -1).to(dy.dtype)  # (B * T, hidden)
            dw, dbias = linear_weight_grads(ctx, dy2, hidden, weight, ctx.bias_dtype, 3)
        return None, None, None, dw, dbias, da, db

class MLP(nn.Module):
    """gpt2: GELU(x W1) W2 with a 4x hidden layer. llama: (silu(x Wg) * x Wu) W2 with a hidden layer of
    about 8/3 x (the same parameter count); Wg and Wu are one matmul."""

    def __init__(self, config, impl, recompute, fp8):
        super().__init__()
        self.swiglu = config.arch == 'llama'
        self.backend = impl['swiglu' if self.swiglu else 'gelu']
        self.approximate = config.gelu_approximate
        # GELU's tanh form without biases: the whole MLP is one op with GELU in its bf16 products' epilogues (not
        # under recompute='activation', whose MLP does not keep GELU's output, nor with fp8 products)
        self.one_op = self.backend == 'triton' and config.gelu_mlp and recompute != 'activation' and not fp8
        # the Triton GELU adds c_fc's bias (its backward sums the bias gradient too); PyTorch's product adds it
        self.bias_in_gelu = not self.swiglu and self.backend == 'triton'
        self.c_fc = nn.Linear(config.n_embd, (2 if self.swiglu else 1) * config.mlp_hidden, bias=config.bias)
        self.c_proj = nn.Linear(config.mlp_hidden, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    @property
    def fc_bias(self):
        """c_fc's bias for its product: None where the Triton GELU adds it."""
        return None if self.bias_in_gelu else self.c_fc.bias

    def forward(self, x):
        """The MLP from its input x (the one op, or as recompute='mlp' runs it again)."""
        w_fc, w_proj = self.c_fc.weight, self.c_proj.weight
        if self.one_op and self.training:  # (sampling: each new length would be a new product to plan)
            copies = (matmul_copy(w_fc, x), matmul_copy(w_proj, x))
            return self.dropout(kernels.gelu_mlp(x, w_fc, w_proj, backend='triton', copies=copies))
        return self.after_fc(linear(x, w_fc, self.fc_bias))

    def after_fc(self, fc, keep_activation=True):
        """The MLP from c_fc's product fc on (the block makes it with its second norm: Norm.linear).
        keep_activation=False: the backward makes the activation's output again (LinearOfActivation)."""
        b = self.c_fc.bias if self.bias_in_gelu else None  # swiglu: fc holds gate and up side by side
        if keep_activation:
            hidden = activation(self.swiglu, self.approximate, self.backend, fc, b)
            return self.dropout(linear(hidden, self.c_proj.weight, self.c_proj.bias))
        return self.dropout(LinearOfActivation.apply(self.swiglu, self.approximate, self.backend, self.c_proj.weight,
                                                     self.c_proj.bias, fc, b))

def recomputed(module, *args, dropout):
    """module(*args) with its activations freed after the forward and made again in the backward. Each op is
    tagged (selective checkpointing with an empty save list): under torch.compile plain checkpointing tags
    PyTorch's ops but not our kernels, whose outputs Inductor would keep. Dropout's draws are replayed only
    where there is dropout: reading the random state is a host operation a CUDA graph cannot record."""
    context = functools.partial(create_selective_checkpoint_contexts, [])
    return checkpoint(module, *args, use_reentrant=False, preserve_rng_state=dropout > 0, context_fn=context)

class Block(nn.Module):

    def __init__(self, config, impl, recompute='none', fp8=False):
        super().__init__()
        self.ln_1 = Norm.of(config, impl)
        self.attn = CausalSelfAttention(config, impl)
        self.ln_2 = Norm.of(config, impl)
        self.mlp = MLP(config, impl, recompute, fp8)
        self.recompute, self.dropout = recompute, config.dropout

    def forward(self, x, update, rope=None):
        """x: the residual stream; update: the last sublayer's output, still to be added to it (None before
        the first block). Returns the next (x, update): x + attn(ln_1(x)) and the MLP's update, as nanoGPT's
        x = x + attn(ln_1(x)); x = x + mlp(ln_2(x)), each add made by the next norm."""
        recompute = self.recompute if self.training else 'none'
        keep = recompute == 'none'  # else the norms' and the activation's outputs are made again in the backward
        qkv, x = self.ln_1.linear(x, update, self.attn.c_attn.weight, self.attn.c_attn.bias, keep_output=keep)
        update = self.attn(qkv, rope)
        if recompute == 'mlp' or (self.mlp.one_op and self.training):  # the MLP from the second norm's output
            h, x = self.ln_2(x, update)
            return x, recomputed(self.mlp, h, dropout=self.dropout) if recompute == 'mlp' else self.mlp(h)
        fc, x = self.ln_2.linear(x, update, self.mlp.c_fc.weight, self.mlp.fc_bias, keep_output=keep)
        return x, self.mlp.after_fc(fc, keep_activation=keep)

class GPT(nn.Module):

    def __init__(self, config, impl=None, recompute='none', autocast_residual=False, fp8=False):
        """impl: {op: 'triton' | 'torch'} (kernels.choose.resolve), None: PyTorch everywhere. autocast_residual: the
        stream in autocast's dtype (bf16), as Megatron-LM keeps it. fp8: the kept copies' products in fp8 (linear)."""
        super().__init__()
        if recompute not in RECOMPUTE:
            raise ValueError(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
        self.config, self.recompute, self.autocast_residual, self.fp8 = config, recompute, autocast_residual, fp8
        self.kernels = impl or dict.fromkeys(ARCH_OPS[config.arch], 'torch')
        self.loss_chunk_bytes = model_chunk_bytes(config.vocab_size, recompute != 'none')
        print("kernels: " + ", ".join(f"{op}={impl}" for op, impl in self.kernels.items()))

        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config, self.kernels, recompute, fp8) for _ in range(config.n_layer)]),
            ln_f=Norm.of(config, self.kernels),
        ))
        if config.arch == 'gpt2':
            self.transformer.wpe = nn.Embedding(config.block_size, config.n_embd)
        else:  # not parameters and not saved: made from the config
            cos, sin = rotary_tables(config.head_dim, config.block_size, config.rope_theta)
            self.register_buffer('rope_cos', cos, persistent=False)
            self.register_buffer('rope_sin', sin, persistent=False)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        if config.tie_embeddings:
            self.transformer.wte.weight = self.lm_head.weight  # one matrix embeds and un-embeds

        self.apply(self._init_weights)
        self.register_load_state_dict_post_hook(refresh_matmul_copies)
        for pn, p in self.named_parameters():  # scaled init of residual projections (GPT-2 paper)
            if pn.endswith('c_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))
        print(f"number of parameters: {self.get_num_params() / 1e6:.2f}M"
              + (", the residual stream in autocast's dtype" if autocast_residual else ""))

    def get_num_params(self, non_embedding=True):
        """Parameter count; position embeddings left out by default (the token embedding is the LM head too)."""
        n_params = sum(p.numel() for p in self.parameters())
        if non_embedding and self.config.arch == 'gpt2':
            n_params -= self.transformer.wpe.weight.numel()
        return n_params

    def _init_weights(self, module):
        if isinstance(module, nn.Linear):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
            if module.bias is not None:
                torch.nn.init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

    def forward(self, idx, targets=None, all_logits=False):
        x, rope = self.embed(idx)
        update = None
        for block in self.transformer.h:
            x, update = block(x, update, rope)
        return self.head(x, update, targets, all_logits)

    def embed(self, idx):
        """The blocks' input (B, T, C) from the token (and GPT-2's position) embeddings; LLaMA's rotary tables."""
        B, T = idx.size()
        if T > self.config.block_size:
            raise ValueError(f"cannot forward a sequence of length {T}: block_size is {self.config.block_size}")
        x, rope = self.transformer.wte(idx), None  # (B, T, C)
        if self.config.arch == 'gpt2':  # positions 0..T-1: wpe's first T rows, a slice, not a lookup
            x = x + self.transformer.wpe.weight[:T]
        else:
            rope = (self.rope_cos[:T], self.rope_sin[:T])
        x = self.transformer.drop(x)
        if self.autocast_residual:  # the stream in autocast's dtype from here on (unchanged without autocast)
            x = x.to(matmul_dtype(x) or x.dtype)
        return x, rope

    def head(self, x, update, targets=None, all_logits=False):
        """The last block's stream and update through the final norm: the loss against targets, or logits."""
        x, _ = self.transformer.ln_f(x, update)
        if targets is None:  # inference: the last position's logits (sampling), or every one's (eval.py)
            return self.lm_head(x if all_logits else x[:, [-1], :]), None  # (B, T or 1, vocab_size)
        if self.kernels['cross_entropy'] == 'triton':  # straight from x: the (B, T, vocab_size) logits never made
            loss = kernels.linear_cross_entropy(x, self.lm_head.weight, targets, ignore_index=-1,
                                                chunk_bytes=self.loss_chunk_bytes, backend='triton')
        else:  # as nanoGPT: the logits in autocast's dtype, then the loss
            loss = kernels.unfused_cross_entropy(x, self.lm_head.weight, targets, ignore_index=-1)
        return None, loss

    def keep_matmul_copies(self, dtype):
        """Give each block matrix a copy in dtype (autocast's) for its products, in fp8 if self.fp8 (kernels.linear's
        keep_copies); drop any kept before (dtype None: only that); none under recompute. Returns the matrices."""
        for p in self.parameters():
            if hasattr(p, 'matmul_copy'):
                del p.matmul_copy, p.matmul_product
        keep = dtype is not None and self.recompute == 'none'
        matrices = [w for w in self.transformer.h.parameters()  # the blocks' four matrices each
                    if w.dim() == 2 and w.dtype == torch.float32 and w.requires_grad] if keep else []
        keep_copies(matrices, dtype, self.fp8)  # raises where fp8 cannot run
        return matrices

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type, muon=None, matmul_dtype=None):
        """AdamW, weight decay on the matrices only; with muon=dict(lr=...), Muon (muon.py: momentum 0.95, no decay)
        for the blocks' matrices, AdamW for the rest; Triton's steps where the model's 'optimizer' is 'triton'. Each
        group keeps its starting lr in 'base_lr' for the schedule; matmul_dtype: keep_matmul_copies's (autocast's)."""
        params = [p for p in self.parameters() if p.requires_grad]
        backend = self.kernels['optimizer']
        if muon is None:
            groups = [dict(params=[p for p in params if p.dim() >= 2], weight_decay=weight_decay),
                      dict(params=[p for p in params if p.dim() < 2], weight_decay=0.0)]
            groups = [g | {'base_lr': learning_rate} for g in groups]
            fused = device_type == 'cuda' and 'fused' in inspect.signature(torch.optim.AdamW).parameters
            optimizer = kernels.AdamW(groups, lr=learning_rate, betas=betas, backend=backend,
                                      **({'fused': True} if fused else {}))
        else:
            from muon import Muon
            matrices = [p for p in self.transformer.h.parameters() if p.requires_grad and p.dim() == 2]
            groups = [dict(params=matrices, muon=True, base_lr=muon['lr'], weight_decay=0.0),
                      dict(params=[p for p in params if p.dim() >= 2 and all(p is not m for m in matrices)], muon=False,
                           base_lr=learning_rate, weight_decay=weight_decay),
                      dict(params=[p for p in params if p.dim() < 2], muon=False, base_lr=learning_rate,
                           weight_decay=0.0)]
            groups = [g | {'lr': g['base_lr']} for g in groups if g['params']]
            optimizer = Muon(groups, momentum=0.95, betas=betas, backend=backend)
        keep = muon is None and matmul_dtype in (torch.bfloat16, torch.float16) and backend == 'triton'
        copies = self.keep_matmul_copies(matmul_dtype if keep else None)
        if copies:
            print(f"AdamW keeps {len(copies)} block matrices' copies in {matmul_dtype} for their products"
                  + (", which run in fp8" if self.fp8 else ""))
        print(", ".join(f"{'Muon' if g.get('muon') else 'AdamW'} lr {g['base_lr']:g} wd {g['weight_decay']:g}: "
                        f"{len(g['params'])} tensors ({sum(p.numel() for p in g['params']):,} parameters)"
                        for g in optimizer.param_groups))
        return optimizer

    def flops_per_token(self):
        """Training FLOPs per token (PaLM appendix B): 6 per parameter, plus the attention's 12 * L * H * hs * T."""
        return 6 * self.get_num_params() + 12 * self.config.n_layer * self.config.n_embd * self.config.block_size

    def estimate_mfu(self, tokens_per_iter, dt, peak_flops):
        """Model FLOPs utilisation: achieved FLOP/s over the device's peak (None if unknown)."""
        return self.flops_per_token() * tokens_per_iter / dt / peak_flops if peak_flops else None

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        """Extend idx (B, T) by max_new_tokens sampled tokens; temperature 0 is greedy."""
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :]  # (B, vocab_size): the last position's
            if temperature == 0:
                idx_next = logits.argmax(dim=-1, keepdim=True)
            else:
                logits = logits / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float('inf')
                idx_next = torch.multinomial(F.softmax(logits, dim=-1), num_samples=1)
            idx = torch.cat((idx, idx_next), dim=1)
        return idx

def compile_model(model):
    """Regional compilation (as torchtitan's), in place: the embeddings, each block and the head compiled on their
    own. The blocks after the first share one graph: a cold start compiles two, not the depth (docs/perf-notes.md)."""
    model.embed = torch.compile(model.embed)
    for block in model.transformer.h:
        block.compile()
    model.head = torch.compile(model.head)
    return model
