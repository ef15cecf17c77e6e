"""
A GPT language model in one file, in two flavours chosen by GPTConfig.arch:
- 'gpt2':  LayerNorm (bias optional), learned positions, GELU MLP, multi-head attention.
- 'llama': RMSNorm, rotary positions, SwiGLU MLP, grouped-query attention (n_kv_head).
Both tie the token embedding to the LM head and attend on the packed qkv projection
(SDPA, or the Triton flash attention, which returns that projection's gradient whole).

Each op's implementation, a Triton kernel from kernels/ or PyTorch, is picked once
when the model is built (see pick_kernels); the forward code below reads the same
either way, and parameter names never depend on the choice, so a checkpoint loads
under any kernel setting. With targets, forward returns (None, loss): with the Triton
loss the LM head and the loss are one op, kernels.linear_cross_entropy, which never makes
the (B, T, vocab) logits; with PyTorch's, nanoGPT's head and loss (the logits in autocast's
dtype, then F.cross_entropy). Without targets, the last position's logits (sampling).
"""
import math
import inspect
import functools
from dataclasses import dataclass

import torch
import torch.nn as nn
import torch.nn.functional as F
import torch._functorch.config as functorch_config
from torch.utils.checkpoint import checkpoint, create_selective_checkpoint_contexts

import kernels
from kernels.adamw import copy_weights, kept_copies
import kernels.choose
from kernels.gelu import APPROXIMATIONS as GELU_FORMS, gelu_fwd
from kernels.rotary import rotary_tables
from kernels.linear_cross_entropy import chunk_bytes_for

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

    def __post_init__(self):
        if self.arch == 'llama':
            self.bias = False  # LLaMA-style blocks have no biases
        if self.gelu_approximate not in GELU_FORMS:
            raise ValueError(f"gelu_approximate must be one of {GELU_FORMS}, got {self.gelu_approximate!r}")

# The ops each architecture uses, and those that have a Triton kernel so far.
ARCH_OPS = {
    'gpt2': ('layer_norm', 'gelu', 'attention', 'cross_entropy'),
    'llama': ('rms_norm', 'rotary', 'swiglu', 'attention', 'cross_entropy'),
}
TRITON_OPS = ('layer_norm', 'rms_norm', 'rotary', 'swiglu', 'gelu', 'attention', 'cross_entropy')
# Ops that kernels='auto' leaves to PyTorch where nothing measures them (a GPT built
# directly, the CPU interpreter; train.py, sample.py and bench.py measure on CUDA, see
# measure_kernels), as measured faster there on the H100 (docs/benchmarks.md):
# - attention: our Triton kernel wins forward + backward at GPT-2's shape on the H100 (1.04x
#   SDPA on q, k, v apart; 1.25x compiled SDPA on the model's packed projection) but loses the
#   forward alone (0.98x), at head dim 128 with long sequences (0.75x), and per call in an
#   eager loop (0.88 ms of host time against SDPA's 0.24);
# - layer_norm, gelu: in GPT-2 124M's whole training step on the H100 the Triton LayerNorm
#   and GELU cost 3.3 ms compiled (30.70 vs 27.42 ms) and 10 ms eager (45.20 vs 35.05 ms)
#   against PyTorch's (docs/runs/2026-11-22-issue5-s2/steps_ce.py); eager, our launches' host
#   time. Compiled, most of it was Inductor copying GELU's input around each call (fixed
#   2026-11-24, tests/test_compile_writes.py): GELU now ties Inductor's (0.215 vs 0.218 ms of
#   GPU time per call), LayerNorm loses to its fused cast (0.148 vs 0.105).
# kernels='triton' takes the kernels.
AUTO_KEEPS_TORCH = ('attention', 'layer_norm', 'gelu')
# Per-op overrides (the scripts' use_triton_<name> settings): True or False decides the op,
# whatever `kernels` says; None follows it. 'mlp' is the MLP's activation, GELU or SwiGLU.
OVERRIDES = {'layer_norm': ('layer_norm',), 'rms_norm': ('rms_norm',), 'rotary': ('rotary',),
             'mlp': ('gelu', 'swiglu'), 'attention': ('attention',), 'cross_entropy': ('cross_entropy',)}

def pick_kernels(setting, arch, device_type, dropout=0.0, overrides=None):
    """({op: 'triton' | 'torch'} for the ops of `arch`, why Triton cannot run here or None),
    decided once for the whole model. setting: 'auto' (Triton where it can run and is the
    faster, see AUTO_KEEPS_TORCH), 'triton' (or fail now), 'torch'; overrides: {name in
    OVERRIDES: True | False | None}, which win over the setting. The Triton attention has no
    dropout: asking for it with dropout > 0 fails."""
    if setting not in kernels.BACKENDS:
        raise ValueError(f"kernels must be one of {kernels.BACKENDS}, got {setting!r}")
    overrides = {name: v for name, v in (overrides or {}).items() if v is not None}
    if set(overrides) - set(OVERRIDES):
        raise ValueError(f"unknown kernel overrides {sorted(set(overrides) - set(OVERRIDES))}: the ops are {tuple(OVERRIDES)}")
    reason = kernels.backend.why_not_triton_on(device_type)
    impl = {}
    for op in ARCH_OPS[arch]:
        name = next((n for n in overrides if op in OVERRIDES[n]), None)
        use = overrides[name] if name else setting == 'triton' or (
            setting == 'auto' and reason is None and op not in AUTO_KEEPS_TORCH)
        asked = f"use_triton_{name}=True" if name else "kernels='triton'"
        if use and reason:
            raise ValueError(f"{asked} cannot run: {reason}")
        if use and op == 'attention' and dropout > 0:
            raise ValueError(f"{asked} cannot run: the Triton attention has no dropout (dropout={dropout})")
        impl[op] = 'triton' if use and op in TRITON_OPS else 'torch'
    return impl, reason

def measure_kernels(config, batch_size, dtype, device, compile, cache_path, overrides=None, backward=True, graphed=False,
                    model_args=None):
    """kernels='auto' measured on this GPU (kernels/choose.py), for the ops of config.arch
    that `overrides` (the user's use_triton_<name>) leaves at None: each op at batch_size x
    block_size, forward + backward (forward only for sampling: backward=False), Triton vs
    PyTorch, for a step compiled or not and replayed from a CUDA graph or not (graphed:
    step_graph.py; both decide on GPU time, and with a recompute other than 'none' in model_args an
    implementation whose peak is far above the other's loses first: kernels.choose.by_memory).
    Prints one line per op with both times and peaks. Returns (the overrides to build GPT with: the
    user's where set, the chosen implementation elsewhere; the timings {op: dict(impl, triton_ms,
    torch_ms, why, failed, ...)}). Not measured: attention with dropout (only SDPA has it) and,
    without backward, the loss (sampling makes no loss). An eager training step is then checked
    whole (eager_step_choice; model_args: GPT's other arguments, as it will be built)."""
    overrides = dict(overrides or {})
    name_of = {op: name for name, ops in OVERRIDES.items() for op in ops}
    model_args = model_args or {}
    recompute = model_args.get('recompute', 'none')
    # with recompute='activation' the MLP is LinearOfNorm's and LinearOfActivation's products with GELU in their
    # epilogues, which no case measures (the GELU kernel alone is not what runs): taken as measured whole, in the step
    # (where it was measured: a step of GPU time, compiled or graphed, in bf16 or fp16 with the Triton norms'
    # LinearOfNorm, which the user may have turned off)
    epilogue_mlp = (recompute == 'activation' and backward and (compile or graphed) and gelu_in_epilogues(config)
                    and dtype in (torch.bfloat16, torch.float16) and overrides.get('mlp') is None
                    and overrides.get('layer_norm') is not False
                    and kernels.choose.why_not_triton_on(torch.device(device).type) is None)
    if epilogue_mlp:
        overrides['mlp'] = True
    ops = [op for op in ARCH_OPS[config.arch] if overrides.get(name_of[op]) is None
           and not (op == 'attention' and config.dropout > 0) and (backward or op != 'cross_entropy')]
    cases = kernels.choose.op_cases(ops, batch_size, config.block_size, config.n_embd, config.n_head, config.n_kv_head,
                                    config.vocab_size, mlp_hidden(config), config.bias, dtype, device,
                                    loss_chunk_bytes(recompute, config.vocab_size, model_args.get('loss_chunk_mib')),
                                    config.gelu_approximate, mlp_as_one_op(config, recompute))
    print("kernels: measuring each op, Triton vs PyTorch, at this run's shapes"
          + (f" (cached in {cache_path})..." if cache_path else "..."))
    if epilogue_mlp:
        print("  gelu: triton, not measured: GELU in the matmuls' epilogues with recompute='activation' (GPT-2's "
              "graphed step 0.4-0.5 ms faster than with PyTorch's GELU or the GELU kernel's passes, H100, docs/perf-notes.md)")
    # an eager step's time is its host's, which the eager step check weighs whole: memory decides only for GPU time
    memory = recompute != 'none' and (compile or graphed)
    timings = kernels.choose.choose(cases, dtype, compile, device, cache_path, backward, graphed, memory)
    for op, r in timings.items():
        overrides[name_of[op]] = r['impl'] == 'triton'
        times = '' if r['torch_ms'] is None else (
            f" (per call in a loop: Triton {r['triton_ms'] or float('nan'):.3f} ms, PyTorch {r['torch_ms']:.3f} ms; "
            f"GPU time alone: {r['triton_gpu_ms'] or float('nan'):.3f} ms, {r['torch_gpu_ms']:.3f} ms"
            + ('' if r.get('torch_peak_mib') is None else
               f"; peak {r['triton_peak_mib'] or float('nan'):,.0f} MiB, {r['torch_peak_mib']:,.0f} MiB") + ")")
        why = r['why'] or ('the smaller peak, not the shorter time (recompute asks for memory)' if r.get('by_memory') else None)
        print(f"  {'WARNING: ' if r['failed'] else ''}{op}: {r['impl']}{times}{', ' + why if why else ''}")
    if backward and not compile and not graphed:
        overrides = eager_step_choice(config, batch_size, dtype, device, cache_path, overrides, timings,
                                      {name_of[op]: op for op in timings}, model_args)
    return overrides, timings

def eager_step_choice(config, batch_size, dtype, device, cache_path, overrides, timings, op_of, model_args):
    """The overrides for an eager training step. Its host runs ahead of the GPU where it can, so
    one op's launch overhead hides behind another's GPU time and the ops' times per call in a
    loop (by which `overrides` chose) do not add up to the step's: on the H100's host, GPT-2's
    eager step with the ops chosen by their GPU time alone ran in 30.3 ms against 33.6 ms as
    chosen per call (docs/perf-notes.md), and on a slower host the other way round. Where the
    two choices differ, a forward + backward step of each is timed and the faster kept;
    measured once per GPU, libraries, model and batch (cached at cache_path). Under DDP rank 0
    decides on one GPU, without the gradients' all-reduce (its hooks add host work to the
    backward of every choice alike)."""
    by_gpu = dict(overrides)
    for name, op in op_of.items():
        r = timings[op]
        if not r['failed'] and r.get('triton_gpu_ms') is not None:
            by_gpu[name] = r['triton_gpu_ms'] < r['torch_gpu_ms']
    if by_gpu == overrides:
        return overrides
    triton_ops = lambda choice: ', '.join(op for name, op in op_of.items() if choice[name]) or 'none'
    # every op's choice in the key, the user's too: they change the model timed
    shapes = (f"{config} x {batch_size} {sorted(model_args.items())}: "
              f"{sorted(by_gpu.items())} or {sorted(overrides.items())}")
    device = torch.device(device)
    key = kernels.choose.cache_key('eager step', shapes, dtype, False, True, device)
    cache = kernels.choose.load_cache(cache_path)
    if key not in cache:
        # its own random numbers: the models built here leave the run's seeded state as it was
        with torch.random.fork_rng(devices=[device] if device.type == 'cuda' else []):
            try:
                cache[key] = dict(by_gpu_ms=_eager_step_ms(config, batch_size, dtype, device, by_gpu, model_args),
                                  per_call_ms=_eager_step_ms(config, batch_size, dtype, device, overrides, model_args))
            except Exception as e:  # a refinement only: whatever stops it, the per-call choice stands
                print(f"kernels: the eager step could not be timed ({type(e).__name__}: {str(e)[:120]}); "
                      "the ops stay chosen per call")
                return overrides
        kernels.choose.save_cache(cache_path, cache)
    r = cache[key]
    faster = r['by_gpu_ms'] < r['per_call_ms']
    print(f"kernels: the eager step (forward + backward) with Triton for {triton_ops(by_gpu)} (the ops' GPU time) "
          f"{r['by_gpu_ms']:.2f} ms, for {triton_ops(overrides)} (per call) {r['per_call_ms']:.2f} ms: "
          f"{'the first' if faster else 'the second'}")
    return by_gpu if faster else overrides

def _eager_step_ms(config, batch_size, dtype, device, overrides, model_args):
    """Median ms of an eager forward + backward on random tokens, by a model built with these overrides."""
    device_type = torch.device(device).type  # a string or a device, as the scripts give it
    model = GPT(config, kernels='auto', device_type=device_type, overrides=overrides, **model_args).to(device)
    idx = torch.randint(config.vocab_size, (batch_size, config.block_size), device=device)

    def step():
        with torch.autocast(device_type, dtype=dtype, enabled=dtype != torch.float32):
            _, loss = model(idx, idx)
        loss.backward()
        model.zero_grad(set_to_none=True)
    try:
        return kernels.choose.time_ms(step, reps=15, warmup=3)
    finally:
        del model, step
        if torch.cuda.is_available():
            torch.cuda.empty_cache()

# The norms take the residual stream x and the last sublayer's output, not yet added
# to it, and return (norm(x + update), x + update): the add rides along with the
# norm's pass over the stream instead of costing a pass of its own. Under autocast the
# norm's output comes in the dtype of the matmul it feeds (autocast's), not in fp32 for
# that matmul to cast: one rounding either way, one pass over the activations fewer.

def matmul_dtype(x):
    """The dtype autocast runs matmuls in on x's device, or None without autocast."""
    return torch.get_autocast_dtype(x.device.type) if torch.is_autocast_enabled(x.device.type) else None

def cast_together(tensors, dtype):
    """The tensors cast to dtype by one multi-tensor copy."""
    out = [torch.empty_like(t, dtype=dtype) for t in tensors]
    torch._foreach_copy_(out, tensors)
    return tuple(out)

class CastMatrices(torch.autograd.Function):
    """Weight matrices cast to `dtype` by one multi-tensor copy, and their gradients back to the
    weights' dtype the same way: the values autocast's per-use casts give, bit for bit, in one
    autograd node and one copy each way instead of four casts and four cast-back nodes (the
    eager step's host time: -1.9 ms in GPT-2's, docs/perf-notes.md)."""

    @staticmethod
    def forward(ctx, dtype, *weights):
        ctx.weight_dtype = weights[0].dtype
        return cast_together(weights, dtype)

    @staticmethod
    def backward(ctx, *grads):
        return None, *cast_together(grads, ctx.weight_dtype)

class TiedEmbedding(torch.autograd.Function):
    """The token embedding's lookup and the LM head's weight, of the one matrix that is both, from one
    autograd node: its backward gets both gradients at once and adds the looked-up rows' gradients
    into the head's, in place (a scatter of B*T rows, atomic adds on CUDA). Autograd's own way sums two
    whole (vocab, C) gradients: the lookup's made dense (zeros, then the scatter), then an add of the two
    (GPT-2's step, H100: docs/perf-notes.md). Eager and under torch.compile (Inductor scatters into the
    head's gradient buffer)."""

    @staticmethod
    def forward(ctx, weight, idx):
        ctx.save_for_backward(idx)
        return F.embedding(idx, weight), weight  # (B, T, C), (vocab, C)

    @staticmethod
    def backward(ctx, grad_rows, grad_head):
        idx, = ctx.saved_tensors
        # the head goes only to the loss, whose backward makes grad_head anew: it can take the rows in place
        rows = grad_rows.reshape(-1, grad_rows.shape[-1]).to(grad_head.dtype)  # (B*T, C)
        return grad_head.index_add_(0, idx.reshape(-1), rows), None

def cast_for_matmul(weight, x):
    """weight in autocast's dtype for a product with x (as stored without autocast), cast by
    Tensor.to: autocast's own cast of a parameter stays in its cache until the autocast region
    ends, which for a Function that keeps the stored matrix and casts it again in its backward
    would hold the copy through the forward, to the step's peak."""
    return weight.to(matmul_dtype(x) or weight.dtype)

# A block matrix's copy in autocast's dtype, weight.matmul_copy, kept by kernels.AdamW's step (which writes it
# with the new weights, rounded as a cast rounds) where GPT.keep_matmul_copies made one: the forward's products
# read it instead of casting the fp32 weight each step, and their weight gradients come out of the product in
# fp32 instead of in bf16 and cast back by a pass of their own (-0.45 ms in GPT-2's graphed step on the H100,
# docs/perf-notes.md, twenty-eighth session).

def matmul_copy(weight, x):
    """weight's kept copy for a product with x under autocast, or None (no copy, or one of another dtype)."""
    copy = getattr(weight, 'matmul_copy', None)
    return copy if copy is not None and copy.dtype == matmul_dtype(x) else None

def weight_grad(dy2, x2, dtype):
    """dy2^T x2, F.linear's weight gradient from dy2 (rows, out) and x2 (rows, in), summed in fp32 and written in
    dtype (the weight's): on CUDA the product's own fp32 output (torch.mm's out_dtype), elsewhere the same sums
    from fp32 copies (the CPU has no out_dtype)."""
    if dy2.is_cuda:
        return torch.mm(dy2.t(), x2, out_dtype=dtype)
    return dy2.t().to(dtype).mm(x2.to(dtype))

class LinearOfCopy(torch.autograd.Function):
    """F.linear(x, weight, bias) under autocast, its product reading copy, weight's kept copy in autocast's
    dtype, and its weight gradient written in weight's dtype (fp32 sums: at most half a unit of autocast's dtype
    from autocast's gradient, which rounds them to that dtype before the cast back). Output and input gradient
    are autograd's."""

    @staticmethod
    def forward(ctx, x, weight, copy, bias):
        x = x.to(copy.dtype)
        ctx.save_for_backward(x, copy)
        ctx.weight_dtype, ctx.bias_dtype = weight.dtype, None if bias is None else bias.dtype
        return F.linear(x, copy, None if bias is None else bias.to(copy.dtype))

    @staticmethod
    def backward(ctx, dy):
        x, copy = ctx.saved_tensors
        with torch.autocast(dy.device.type, enabled=False):  # LinearOfActivation says why
            dy2 = dy.reshape(-1, dy.shape[-1])  # (B * T, out)
            dx = dy.matmul(copy) if ctx.needs_input_grad[0] else None
            dw = weight_grad(dy2, x.reshape(dy2.shape[0], -1), ctx.weight_dtype) if ctx.needs_input_grad[1] else None
            dbias = dy2.sum(0).to(ctx.bias_dtype) if ctx.needs_input_grad[3] else None
        return dx, dw, None, dbias

@torch.no_grad()
def refresh_matmul_copies(model, incompatible_keys=None):
    """The copies kept for model's matrices made again from the weights, in place (load_state_dict's post-hook)."""
    params = list(model.parameters())
    copy_weights(params, kept_copies(params))

def linear(x, weight, bias=None):
    """F.linear(x, weight, bias), by LinearOfCopy where weight has a copy kept for this product."""
    copy = matmul_copy(weight, x)
    return F.linear(x, weight, bias) if copy is None else LinearOfCopy.apply(x, weight, copy, bias)

def linear_weight_grads(ctx, dy2, x2, weight, bias_dtype, weight_index):
    """F.linear's weight and bias gradients as autograd makes them, from dy2 (rows, out) and the
    input x2 (rows, in) in dy2's dtype; None where the Function's inputs at weight_index and the
    one after it ask for none."""
    dw = dy2.t().mm(x2).to(weight.dtype) if ctx.needs_input_grad[weight_index] else None
    dbias = dy2.sum(0).to(bias_dtype) if ctx.needs_input_grad[weight_index + 1] else None
    return dw, dbias

class LinearOfNorm(torch.autograd.Function):
    """F.linear(y, weight, bias) for y = norm(h), h = x + update (x itself without an update),
    keeping h but not y: F.linear would keep y, as wide as the stream, for its weight gradient.
    The norm's backward kernel writes y again in its own pass (kernels.norm.norm_bwd_with_y),
    after y's gradient is made and before the weight gradient's product reads it: one more write
    of the stream's width per norm in the backward, for its bytes off the peak (recompute=
    'activation'; 'mlp' for the first norm). Returns the product, and h where there is an update.
    The products are autograd's for F.linear; Triton norms only (Norm.linear). With gelu (GELU's tanh
    form, no bias): the product's epilogue also writes its GELU (kernels.gelu_linear_fwd), returned
    after the product and taking no gradient: LinearOfActivation consumes both and hands back the
    product's gradient."""

    @staticmethod
    def forward(ctx, is_rms, eps, out_dtype, gelu, weight, bias, x, update, norm_weight, norm_bias):
        # as the norm modules call it: the update normalised with x as the residual
        y, h, stats = kernels.norm.norm_fwd(x if update is None else update, None if update is None else x,
                                            norm_weight, norm_bias, eps, is_rms, out_dtype)
        h = x if update is None else h  # (B, T, C), the stream
        ctx.save_for_backward(weight, h, norm_weight, norm_bias, stats)
        ctx.is_rms, ctx.out_dtype, ctx.has_update = is_rms, out_dtype, update is not None
        ctx.bias_dtype = None if bias is None else bias.dtype
        if gelu:
            out, g = kernels.gelu_linear_fwd(y.reshape(-1, y.shape[-1]), cast_for_matmul(weight, y))
            out, g = out.view(*y.shape[:-1], -1), g.view(*y.shape[:-1], -1)  # (B, T, hidden)
            ctx.mark_non_differentiable(g)
            # no zeros made for g's gradient (compiled, unused ones are dropped); an unused h's gradient comes as None
            ctx.set_materialize_grads(False)
            return (out, g, h) if update is not None else (out, g)
        out = F.linear(y, cast_for_matmul(weight, y), bias)
        return (out, h) if update is not None else out

    @staticmethod
    def backward(ctx, dy, *more):  # more: g's gradient (none) with gelu, then h's where there is an update
        dh_out = more[-1] if ctx.has_update else None
        weight, h, norm_weight, norm_bias, stats = ctx.saved_tensors
        # outside autocast, as autograd runs F.linear's backward (LinearOfActivation says why)
        with torch.autocast(dy.device.type, enabled=False):
            dy2 = dy.reshape(-1, dy.shape[-1])  # (B * T, out), in the dtype the forward's product ran in
            dnormed = dy2.mm(weight.to(dy.dtype)).view(h.shape).to(ctx.out_dtype)  # (B, T, C), y's gradient
            dh, dwdb, y = kernels.norm.norm_bwd_with_y(dnormed, dh_out, h, norm_weight, norm_bias, stats,
                                                       ctx.is_rms, ctx.out_dtype)
            dw, dbias = linear_weight_grads(ctx, dy2, y.view(dy2.shape[0], -1).to(dy.dtype), weight, ctx.bias_dtype, 4)
        dnw, dnb = kernels.norm.weight_grads(dwdb, norm_weight.dtype, None if norm_bias is None else norm_bias.dtype)
        return None, None, None, None, dw, dbias, dh, dh if ctx.has_update else None, dnw, dnb

class Norm(nn.Module):
    """What LayerNorm and RMSNorm share: the norm with the residual add fused, then a Linear."""

    def linear(self, x, update, weight, bias, keep_output=True, gelu=False):
        """(F.linear(y, weight, bias), the stream) for (y, stream) = self(x, update). keep_output=False
        keeps the norm's input and not y for the backward, whose norm kernel writes y again
        (LinearOfNorm); PyTorch's norm keeps y either way (GPT says so once). gelu (with keep_output=False,
        no bias): the product is the pair (product, its GELU by the product's epilogue), or (product, None)
        where the norm is PyTorch's."""
        if keep_output or not kernels.norm.takes_triton(self.op, self.backend, x, update, self.weight, self.bias):
            y, x = self(x, update)
            out = linear(y, weight, bias)
            return ((out, None) if gelu else out), x
        out_dtype = kernels.norm.output_dtype(self.op, x, update, matmul_dtype(x))  # as self(x, update) has it
        out = LinearOfNorm.apply(self.is_rms, self.eps, out_dtype, gelu, weight, bias, x, update, self.weight, self.bias)
        if gelu:
            return (out[:2], out[2]) if update is not None else (out, x)
        return out if update is not None else (out, x)

class LayerNorm(Norm):
    """LayerNorm with an optional bias, by the kernel or PyTorch, with the residual add fused."""
    op, is_rms, eps = 'layer_norm', False, 1e-5

    def __init__(self, ndim, bias, backend):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.bias = nn.Parameter(torch.zeros(ndim)) if bias else None
        self.backend = backend

    def forward(self, x, update=None):
        if update is None:
            return kernels.layer_norm(x, self.weight, self.bias, self.eps, out_dtype=matmul_dtype(x), backend=self.backend), x
        return kernels.layer_norm(update, self.weight, self.bias, self.eps, residual=x, out_dtype=matmul_dtype(x),
                                  backend=self.backend)

class RMSNorm(Norm):
    op, is_rms, bias = 'rms_norm', True, None

    def __init__(self, ndim, backend, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(ndim))
        self.eps = eps
        self.backend = backend

    def forward(self, x, update=None):
        if update is None:
            return kernels.rms_norm(x, self.weight, self.eps, out_dtype=matmul_dtype(x), backend=self.backend), x
        return kernels.rms_norm(update, self.weight, self.eps, residual=x, out_dtype=matmul_dtype(x), backend=self.backend)

def make_norm(config, impl):
    if config.arch == 'gpt2':
        return LayerNorm(config.n_embd, config.bias, impl['layer_norm'])
    return RMSNorm(config.n_embd, impl['rms_norm'])

class CausalSelfAttention(nn.Module):

    def __init__(self, config, impl):
        super().__init__()
        assert config.n_embd % config.n_head == 0
        self.n_head = config.n_head
        self.n_kv_head = config.n_kv_head or config.n_head
        assert self.n_head % self.n_kv_head == 0, "n_head must be a multiple of n_kv_head"
        self.head_dim = config.n_embd // config.n_head
        # query, key and value projections in one matmul; k and v have n_kv_head heads
        self.c_attn = nn.Linear(config.n_embd, (self.n_head + 2 * self.n_kv_head) * self.head_dim, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = config.dropout
        self.resid_dropout = nn.Dropout(config.dropout)
        self.rotary_backend = impl.get('rotary')
        # 'auto' where the model chose the kernel: a run without autocast (fp32) goes to SDPA
        # with one printed line, as the kernel takes bf16 and fp16 only
        self.attention_backend = 'auto' if impl['attention'] == 'triton' else 'torch'

    def forward(self, qkv, w_proj, rope=None):
        """qkv: c_attn's product, which the block makes (Norm.linear); w_proj: c_proj's weight as the
        block casts it (Block.matrices). The Linears hold the parameters only: their forward is not
        called (nor their hooks)."""
        B, T, _ = qkv.size()
        nh, nkv = self.n_head, self.n_kv_head
        C = nh * self.head_dim
        dropout = self.dropout if self.training else 0.0
        qkv = qkv.view(B, T, nh + 2 * nkv, self.head_dim)  # (B, T, nh + 2 nkv, hs): q, k, v heads
        if rope is not None:  # q and k turned, v copied along: still one tensor of that layout
            qkv = kernels.rotary_qkv(qkv, nh + nkv, *rope, backend=self.rotary_backend)
        # q, k, v read in place; their gradient comes back as one tensor of qkv's layout (no concatenation)
        y = kernels.flash_attention_qkv(qkv, nh, causal=True, dropout_p=dropout, backend=self.attention_backend)
        y = y.transpose(1, 2).contiguous().view(B, T, C)  # (B, T, C), heads side by side (no copy after the kernel)
        return self.resid_dropout(linear(y, w_proj, self.c_proj.bias))

def mlp_hidden(config):
    """The MLP's hidden width: 4x for GELU; about 8/3 x for SwiGLU (the same parameter count)."""
    return 64 * math.ceil(8 * config.n_embd / 3 / 64) if config.arch == 'llama' else 4 * config.n_embd

def activation(swiglu, approximate, backend, a, b):
    """The MLP's activation: swiglu(gate=a, up=b), or gelu(a + b) with b c_fc's bias or None, in the
    form `approximate` names ('none': erf, 'tanh')."""
    return kernels.swiglu(a, b, backend=backend) if swiglu else kernels.gelu(a, b, approximate, backend=backend)

class LinearOfActivation(torch.autograd.Function):
    """F.linear(activation(a, b), weight, bias), keeping the activation's inputs but not its
    output: F.linear would keep that output, as wide as the hidden layer, for its weight
    gradient. The activation's backward writes it again in its own pass (kernels.gelu_backward,
    kernels.swiglu_backward): one more write of the hidden layer per MLP in the backward, for
    its bytes off the peak (recompute='activation'). The products are autograd's for F.linear. With
    epilogues (GPT-2's MLP with GELU's tanh form, no bias, kernels.gelu_mlp's conditions): the activation's
    output comes given as made by c_fc's product (hidden, LinearOfNorm), or is made here; in the backward,
    GELU's derivative goes into the epilogue of the input gradient's product (kernels.dgelu_matmul) and
    the GELU kernel makes the output again for the weight gradient."""

    @staticmethod
    def forward(ctx, swiglu, approximate, backend, epilogues, weight, bias, a, b, hidden=None):
        if hidden is None:
            hidden = activation(swiglu, approximate, backend, a, b)
        ctx.save_for_backward(weight, a, b)  # not the bias: only its dtype is needed
        ctx.swiglu, ctx.approximate, ctx.backend, ctx.hidden_dtype = swiglu, approximate, backend, hidden.dtype
        ctx.epilogues = epilogues
        ctx.bias_dtype = None if bias is None else bias.dtype
        return F.linear(hidden, cast_for_matmul(weight, hidden), bias)

    @staticmethod
    def backward(ctx, dy):
        weight, a, b = ctx.saved_tensors
        # outside autocast, as autograd runs F.linear's backward: torch.compile traces this under
        # the forward's autocast, which would sum the bias gradient in fp32, not in dy's dtype
        with torch.autocast(dy.device.type, enabled=False):
            dy2 = dy.reshape(-1, dy.shape[-1])  # (B * T, C), in the dtype the forward's product ran in
            if ctx.epilogues:
                a2 = a.reshape(dy2.shape[0], -1)  # (B * T, hidden), in dy's dtype as c_fc's product wrote it
                da, db = kernels.dgelu_matmul(dy2, weight.to(dy.dtype), a2).view(a.shape), None
                # from the rounded a: within a unit of the forward's output, which the epilogue took from fp32 sums
                hidden = gelu_fwd(a2, None, 'tanh')
            else:
                d_hidden = dy2.mm(weight.to(dy.dtype)).view(*a.shape[:-1], -1).to(ctx.hidden_dtype)  # (B, T, hidden)
                backward = kernels.swiglu_backward if ctx.swiglu else functools.partial(kernels.gelu_backward,
                                                                                       approximate=ctx.approximate)
                da, db, hidden = backward(d_hidden, a, b, backend=ctx.backend)
            hidden = hidden.reshape(dy2.shape[0], -1).to(dy.dtype)  # (B * T, hidden)
            dw, dbias = linear_weight_grads(ctx, dy2, hidden, weight, ctx.bias_dtype, 4)
        return None, None, None, None, dw, dbias, da, db, None

def mlp_as_one_op(config, recompute):
    """Whether the MLP with GELU in the epilogues is kernels.gelu_mlp, one op (not under
    recompute='activation', whose MLP does not keep GELU's output)."""
    return gelu_in_epilogues(config) and recompute != 'activation'

def gelu_in_epilogues(config):
    """Whether the MLP, where its GELU is Triton's, computes GELU in the epilogues of the matmuls
    around it, with no GELU pass of its own in the forward (-1 ms in GPT-2's graphed step on the
    H100, docs/perf-notes.md): as kernels.gelu_mlp, or with recompute='activation' through
    LinearOfNorm and LinearOfActivation, which do not keep GELU's output. cuBLASLt has GELU's tanh
    form only, and no bias here."""
    return config.arch == 'gpt2' and config.gelu_approximate == 'tanh' and not config.bias

class MLP(nn.Module):
    """gpt2: GELU(x W1) W2 with a 4x hidden layer. llama: (silu(x Wg) * x Wu) W2 with a
    hidden layer of about 8/3 x (same parameter count); Wg and Wu are one matmul."""

    def __init__(self, config, impl, recompute):
        super().__init__()
        self.swiglu = config.arch == 'llama'
        self.backend = impl['swiglu' if self.swiglu else 'gelu']
        self.approximate = config.gelu_approximate
        self.epilogues = self.backend == 'triton' and gelu_in_epilogues(config)
        self.one_op = self.backend == 'triton' and mlp_as_one_op(config, recompute)
        # the Triton GELU takes c_fc's bias (its backward then sums the bias gradient too);
        # PyTorch keeps it in the matmul, as nanoGPT does
        self.bias_in_gelu = not self.swiglu and self.backend == 'triton'
        hidden = mlp_hidden(config)
        self.c_fc = nn.Linear(config.n_embd, 2 * hidden if self.swiglu else hidden, bias=config.bias)
        self.c_proj = nn.Linear(hidden, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    @property
    def fc_bias(self):
        """c_fc's bias for its product: None where the Triton GELU adds it."""
        return None if self.bias_in_gelu else self.c_fc.bias

    def forward(self, x, w_fc, w_proj):
        """The MLP from its input x, as recompute='mlp' runs it again; w_fc, w_proj: c_fc's and c_proj's
        weights as Block.matrices hands them. The Linears hold the parameters only: their forward is not
        called (nor their hooks)."""
        if self.one_op and self.training:  # (sampling: each new length would be a new product to measure)
            copies = (matmul_copy(w_fc, x), matmul_copy(w_proj, x))
            return self.dropout(kernels.gelu_mlp(x, w_fc, w_proj, backend='triton', copies=copies))
        return self.after_fc(linear(x, w_fc, self.fc_bias), w_proj)

    def after_fc(self, fc, w_proj, keep_activation=True, hidden=None):
        """The MLP from c_fc's product fc on (the block makes it: Norm.linear). keep_activation=False:
        the backward makes the activation's output again (LinearOfActivation); hidden: that output
        where c_fc's product made it in its epilogue."""
        if self.swiglu:
            a, b = fc.chunk(2, dim=-1)  # gate, up: read in place by the kernel
        else:
            a, b = fc, self.c_fc.bias if self.bias_in_gelu else None
        if keep_activation:
            return self.dropout(linear(activation(self.swiglu, self.approximate, self.backend, a, b), w_proj,
                                       self.c_proj.bias))
        return self.dropout(LinearOfActivation.apply(self.swiglu, self.approximate, self.backend, self.epilogues,
                                                     w_proj, self.c_proj.bias, a, b, hidden))

# what the backward recomputes rather than keeps from the forward: nothing; each norm's output
# (Triton's norm: LinearOfNorm) and each MLP's activation output (LinearOfActivation), each from
# its input in its backward kernel's pass; the first norm's output as 'activation' does and each
# MLP (from its input, which is kept: its hidden activations are 44% of what a GPT-2 block
# keeps); each whole block (from its inputs: the residual stream and the last update)
RECOMPUTE = ('none', 'activation', 'mlp', 'block')

def loss_chunk_bytes(recompute, vocab_size, loss_chunk_mib=None):
    """The fused loss's chunk of logits (kernels.linear_cross_entropy's chunk_bytes): loss_chunk_mib,
    or by default without recompute 4096 rows of bf16 logits or 400 MiB, whichever is more, and
    with recompute the op's own default (None). Each chunk's dW product reads and writes the whole
    fp32 dW, so fewer, larger chunks are faster: GPT-2's 12 x 1024 tokens go in 3 chunks instead of
    6, -0.6 ms a step for +198 MiB on the H100 (docs/perf-notes.md); recompute is asked for
    memory, so it keeps the smaller chunk."""
    if loss_chunk_mib is not None:
        if isinstance(loss_chunk_mib, bool) or not isinstance(loss_chunk_mib, (int, float)) or loss_chunk_mib <= 0:
            raise ValueError(f"loss_chunk_mib must be a positive number of MiB (or None for the default), got {loss_chunk_mib!r}")
        return math.ceil(loss_chunk_mib * 2**20)
    return chunk_bytes_for(vocab_size, 2, 400 * 2**20, 4096) if recompute == 'none' else None

def recomputed(module, *args, dropout, every_op):
    """module(*args) with its activations freed after the forward and recomputed in the backward
    (its forward runs twice). Dropout's draws are replayed only where there is dropout: reading
    the random state is a host operation that a CUDA graph cannot record. Under torch.compile,
    plain checkpointing tags PyTorch's ops but not our kernels (ops inside autograd Functions),
    whose outputs Inductor then keeps; every_op tags each op (selective checkpointing with an
    empty save list). The MLP wants it (compiled: 4,311 MiB against 5,178, docs/perf-notes.md);
    a whole block does not: tagged to the last op, its outputs, the next block's inputs, are
    recomputed too, the backward redoes the whole forward at once and peaks as if nothing was freed."""
    context = dict(context_fn=functools.partial(create_selective_checkpoint_contexts, [])) if every_op else {}
    return checkpoint(module, *args, use_reentrant=False, preserve_rng_state=dropout > 0, **context)

class Block(nn.Module):

    def __init__(self, config, impl, recompute='none', cast_per_block=True):
        super().__init__()
        self.ln_1 = make_norm(config, impl)
        self.attn = CausalSelfAttention(config, impl)
        self.ln_2 = make_norm(config, impl)
        self.mlp = MLP(config, impl, recompute)
        # recompute: 'none', 'activation' or 'mlp' (GPT handles 'block')
        self.recompute, self.dropout, self.cast_per_block = recompute, config.dropout, cast_per_block

    def forward(self, x, update, rope=None):
        """x: the residual stream; update: the last sublayer's output, still to be added
        to it (None before the first block). Returns the next (x, update)."""
        recompute = self.recompute if self.training else 'none'
        w_attn, w_attn_proj, w_fc, w_mlp_proj = self.matrices(x, recompute)
        keep = recompute == 'none'  # else the norms' and the activation's outputs are made again in the backward
        qkv, x = self.ln_1.linear(x, update, w_attn, self.attn.c_attn.bias, keep_output=keep)
        update = self.attn(qkv, w_attn_proj, rope)
        if recompute == 'mlp' or (self.mlp.one_op and self.training):  # the MLP from its input, the second norm's output
            h, x = self.ln_2(x, update)
            if recompute == 'mlp':  # which it keeps
                return x, recomputed(self.mlp, h, w_fc, w_mlp_proj, dropout=self.dropout, every_op=True)
            return x, self.mlp(h, w_fc, w_mlp_proj)
        gelu = self.mlp.epilogues and not keep  # 'activation': GELU in c_fc's epilogue, its output not kept
        fc, x = self.ln_2.linear(x, update, w_fc, self.mlp.fc_bias, keep_output=keep, gelu=gelu)
        fc, hidden = fc if gelu else (fc, None)
        return x, self.mlp.after_fc(fc, w_mlp_proj, keep_activation=keep, hidden=hidden)

    def matrices(self, x, recompute):
        """The block's four weight matrices for its matmuls: with cast_per_block, in an eager
        training step under autocast, cast to autocast's dtype together (CastMatrices); otherwise
        as stored, for autocast to cast at each use as nanoGPT's model has it. Left to autocast:
        - without grad (sampling, evaluation): autocast casts each matrix once per autocast region;
        - a frozen matrix in the block: the Function's outputs would all ask for weight gradients;
        - with recompute: LinearOfNorm and LinearOfActivation keep the stored matrices and cast them
          again in their backward, and a recomputed MLP casts its two inside its region; cast
          together beforehand, the copies would be kept for the backward (GPT-2 124M: 149 MiB). The
          attention's c_proj goes to autocast too, as do c_attn and c_fc with PyTorch's norms (F.linear
          keeps their copies either way: only host time would be saved, in a setting asked for memory);
        - under torch.compile: Inductor makes the casts in its own kernels, so there are no host
          calls to save, and on the GPU machine (torch 2.11, CUDA) the compiled graph gave zero
          gradients to the matrices through CastMatrices (docs/perf-notes.md);
        - with copies kept by the optimizer (matmul_copy): the products read those instead."""
        weights = self.all_matrices()
        dtype = matmul_dtype(x)
        if (not self.cast_per_block or recompute != 'none' or dtype in (None, weights[0].dtype) or not torch.is_grad_enabled()
                or not all(w.requires_grad for w in weights) or torch.compiler.is_compiling()
                or any(matmul_copy(w, x) is not None for w in weights)):
            return weights
        return CastMatrices.apply(dtype, *weights)

    def all_matrices(self):
        return self.attn.c_attn.weight, self.attn.c_proj.weight, self.mlp.c_fc.weight, self.mlp.c_proj.weight

class GPT(nn.Module):

    def __init__(self, config, kernels='auto', device_type=None, overrides=None, recompute='none',
                 autocast_residual=False, cast_per_block=True, scatter_embedding_grad=True, loss_chunk_mib=None):
        super().__init__()
        if config.arch not in ARCH_OPS:
            raise ValueError(f"arch must be one of {tuple(ARCH_OPS)}, got {config.arch!r}")
        if recompute not in RECOMPUTE:
            raise ValueError(f"recompute must be one of {RECOMPUTE}, got {recompute!r}")
        self.config, self.recompute = config, recompute
        self.loss_chunk_bytes = loss_chunk_bytes(recompute, config.vocab_size, loss_chunk_mib)
        # the residual stream in autocast's dtype (bf16) instead of fp32, as Megatron-LM keeps it by
        # default: the norms' passes over the stream move 8 bytes per element instead of 12-14, the
        # blocks keep half the bytes, and the stream's gradient needs no cast before each matmul
        self.autocast_residual = autocast_residual
        # cast_per_block: under autocast each block's matrices are cast together, not at each use
        # (the same values, less host time; Block.matrices); the baselines turn it off
        # scatter_embedding_grad: in a training step the tied matrix's two uses come from one node
        # (TiedEmbedding), which scatters the looked-up rows' gradients into the LM head's, instead of
        # autograd summing two whole (vocab, C) gradients. Rows of one token add up in the order their
        # atomic adds land (as in Inductor's own embedding backward), unless
        # torch.use_deterministic_algorithms(True). The baselines turn it off, as nanoGPT's model has it
        self.scatter_embedding_grad = scatter_embedding_grad
        device_type = device_type or ('cuda' if torch.cuda.is_available() else 'cpu')
        self.kernels, reason = pick_kernels(kernels, config.arch, device_type, config.dropout, overrides)
        # AdamW's step (configure_optimizers): kernels.AdamW's one launch per group, or torch's fused step with 'torch'
        self.adamw_backend = 'torch' if kernels == 'torch' or reason else kernels
        print("kernels: " + ", ".join(f"{op}={impl}" for op, impl in self.kernels.items())
              + (f" (PyTorch everywhere: {reason})" if kernels == 'auto' and reason else ""))

        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config, self.kernels, 'none' if recompute == 'block' else recompute, cast_per_block)
                             for _ in range(config.n_layer)]),
            ln_f=make_norm(config, self.kernels),
        ))
        norm = self.transformer.ln_f
        if recompute in ('activation', 'mlp') and norm.backend != 'triton':
            print(f"recompute={recompute!r}: PyTorch's {norm.op} keeps its outputs (the Triton norm's backward makes them again)")
        if config.arch == 'gpt2':
            self.transformer.wpe = nn.Embedding(config.block_size, config.n_embd)
        else:  # not parameters and not saved: recomputed from the config
            cos, sin = rotary_tables(config.n_embd // config.n_head, config.block_size, config.rope_theta)
            self.register_buffer('rope_cos', cos, persistent=False)
            self.register_buffer('rope_sin', sin, persistent=False)
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight  # tied: one matrix embeds and un-embeds

        self.apply(self._init_weights)
        self.register_load_state_dict_post_hook(refresh_matmul_copies)
        for pn, p in self.named_parameters():  # scaled init of residual projections (GPT-2 paper)
            if pn.endswith('c_proj.weight'):
                torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))
        print(f"number of parameters: {self.get_num_params() / 1e6:.2f}M"
              + (", the residual stream in autocast's dtype" if autocast_residual else ""))

    def get_num_params(self, non_embedding=True):
        """Parameter count; position embeddings are left out by default (the token
        embedding stays: it is the LM head too)."""
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

    def forward(self, idx, targets=None):
        B, T = idx.size()
        if T > self.config.block_size:
            raise ValueError(f"cannot forward a sequence of length {T}: the model's block_size is {self.config.block_size}")
        if self.scatter_embedding_grad and targets is not None and torch.is_grad_enabled():
            x, head = TiedEmbedding.apply(self.transformer.wte.weight, idx)  # (B, T, C), the LM head's weight
        else:
            x, head = self.transformer.wte(idx), self.lm_head.weight
        rope = None
        if self.config.arch == 'gpt2':  # positions 0..T-1: wpe's first T rows, a slice, not a lookup and its scatter back
            x = x + self.transformer.wpe.weight[:T]  # (B, T, C) + (T, C)
        else:
            rope = (self.rope_cos[:T], self.rope_sin[:T])
        x, update = self.transformer.drop(x), None
        if self.autocast_residual:  # (B, T, C), the stream in bf16 from here on (unchanged without autocast)
            x = x.to(matmul_dtype(x) or x.dtype)
        for block in self.transformer.h:
            x, update = (recomputed(block, x, update, rope, dropout=self.config.dropout, every_op=False)
                         if self.recompute == 'block' and self.training else block(x, update, rope))
        x, _ = self.transformer.ln_f(x, update)

        if targets is not None:  # training: the loss, and no logits returned
            logits = None
            if self.kernels['cross_entropy'] == 'triton':  # straight from x: the (B, T, vocab_size) logits never made
                loss = kernels.linear_cross_entropy(x, head, targets, ignore_index=-1,
                                                    chunk_bytes=self.loss_chunk_bytes, backend='triton')
            else:  # as nanoGPT: the logits in autocast's dtype, then the loss
                loss = kernels.unfused_cross_entropy(x, head, targets, ignore_index=-1)
        else:  # inference: only the last position's logits are needed
            logits = self.lm_head(x[:, [-1], :])  # (B, 1, vocab_size)
            loss = None
        return logits, loss

    def keep_matmul_copies(self, dtype):
        """Give the block matrices (their products, linear() and kernels.gelu_mlp, read it) a copy in dtype
        (autocast's), for kernels.AdamW's step to keep, and drop any kept before (dtype None: only that):
        matmul_copy's comment says why. None with recompute: it is asked for memory, which the copies cost (and
        LinearOfNorm and LinearOfActivation cast again in their backward). load_state_dict makes them again from
        the loaded weights; after changing the weights any other way, call refresh_matmul_copies(model).
        Returns the matrices given one."""
        for p in self.parameters():  # copies an earlier optimizer kept: another one would leave them behind
            if hasattr(p, 'matmul_copy'):
                del p.matmul_copy
        keep = dtype is not None and self.recompute == 'none'  # ('block' builds its blocks with 'none')
        matrices = [w for block in self.transformer.h for w in block.all_matrices()
                    if w.dtype == torch.float32 and w.requires_grad] if keep else []
        for w in matrices:
            w.matmul_copy = w.detach().to(dtype)
        return matrices

    def configure_optimizers(self, weight_decay, learning_rate, betas, device_type, muon=None, adamw_backend=None,
                             matmul_dtype=None):
        """AdamW for every parameter (muon=None), with weight decay on the matrices only (kernels.AdamW: torch's
        AdamW with its step in one Triton launch per group, or torch's own fused step for a model built with
        kernels='torch', where Triton cannot run, or with adamw_backend='torch'; Muon's AdamW groups follow Muon's
        backend); or, with
        muon = dict(lr, momentum, weight_decay, embed_lr, scalar_lr), Muon (muon.py) for the
        blocks' weight matrices and AdamW for the embeddings (the LM head is the token embedding)
        at embed_lr and the gains and biases at scalar_lr. Every group keeps its starting lr in
        'base_lr', which the schedule scales. matmul_dtype (autocast's, with AdamW on a model built with kernels):
        AdamW keeps the block matrices' copies in it for their products (keep_matmul_copies)."""
        params = [p for p in self.parameters() if p.requires_grad]
        if muon is None:
            decay = [p for p in params if p.dim() >= 2]
            groups = [dict(params=decay, weight_decay=weight_decay), dict(params=[p for p in params if p.dim() < 2], weight_decay=0.0)]
            for g in groups:
                g['base_lr'] = learning_rate
            fused = device_type == 'cuda' and 'fused' in inspect.signature(torch.optim.AdamW).parameters
            optimizer = kernels.AdamW(groups, lr=learning_rate, betas=betas, backend=adamw_backend or self.adamw_backend,
                                      **({'fused': True} if fused else {}))
        else:
            from muon import Muon
            matrices = [p for p in self.transformer.h.parameters() if p.requires_grad and p.dim() == 2]
            in_muon = set(map(id, matrices))
            embeddings = [p for p in params if p.dim() >= 2 and id(p) not in in_muon]
            scalars = [p for p in params if p.dim() < 2]
            groups = [dict(params=matrices, muon=True, base_lr=muon['lr'], weight_decay=muon['weight_decay']),
                      dict(params=embeddings, muon=False, base_lr=muon['embed_lr'], weight_decay=weight_decay),
                      dict(params=scalars, muon=False, base_lr=muon['scalar_lr'], weight_decay=0.0)]
            for g in groups:
                g['lr'] = g['base_lr']
            optimizer = Muon([g for g in groups if g['params']], momentum=muon['momentum'], betas=betas,
                             backend=muon.get('backend', 'auto'))
        # kept by kernels.AdamW only: not for Muon, nor for nanoGPT's baselines (a model built with kernels='torch')
        keep = muon is None and matmul_dtype in (torch.bfloat16, torch.float16) and self.adamw_backend != 'torch'
        copies = self.keep_matmul_copies(matmul_dtype if keep else None)
        if copies:
            print(f"AdamW keeps {len(copies)} block matrices' copies in {matmul_dtype} for their products")
        print(", ".join(f"{'Muon' if g.get('muon') else 'AdamW'} lr {g['base_lr']:g} wd {g['weight_decay']:g}: "
                        f"{len(g['params'])} tensors ({sum(p.numel() for p in g['params']):,} parameters)"
                        for g in optimizer.param_groups))
        return optimizer

    def flops_per_token(self):
        """Training FLOPs per token, forward + backward (PaLM appendix B): 6 per
        parameter plus the attention scores and their use, 12 * L * H * hs * T."""
        cfg = self.config
        return 6 * self.get_num_params() + 12 * cfg.n_layer * cfg.n_embd * cfg.block_size

    def estimate_mfu(self, tokens_per_iter, dt, peak_flops):
        """Model FLOPs utilisation: achieved FLOP/s over the device's peak (None if unknown)."""
        if not peak_flops:
            return None
        return self.flops_per_token() * tokens_per_iter / dt / peak_flops

    @torch.no_grad()
    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
        """Extend idx (B, T) by max_new_tokens sampled tokens; temperature 0 is greedy."""
        for _ in range(max_new_tokens):
            idx_cond = idx if idx.size(1) <= self.config.block_size else idx[:, -self.config.block_size:]
            logits, _ = self(idx_cond)
            logits = logits[:, -1, :]
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

# Dense bf16 tensor-core peak FLOP/s by GPU name, for MFU. The first key found in the
# device name wins, so more specific names come first.
GPU_PEAK_FLOPS = [
    ('H100 PCIe', 756e12), ('H100 NVL', 835e12), ('H100', 989e12), ('H200', 989e12), ('H800', 989e12),
    ('GH200', 989e12), ('B200', 2250e12), ('B100', 1750e12), ('A100', 312e12), ('A800', 312e12),
    ('L40S', 362e12), ('L40', 181e12), ('L4', 121e12), ('A10G', 70e12), ('A10', 125e12),
    ('RTX 4090', 165e12), ('RTX 3090', 71e12), ('A6000', 155e12), ('V100', 125e12), ('T4', 65e12),
]

def gpu_peak_flops(device):
    """(name, peak FLOP/s) of the device; peak is None for CPUs and GPUs not in the table."""
    if torch.device(device).type != 'cuda':
        return 'cpu', None
    name = torch.cuda.get_device_name(device)
    return name, next((flops for key, flops in GPU_PEAK_FLOPS if key in name), None)

# Inductor settings added to the mode's for the models this repository compiles (train.py, and
# bench.py's kernels variants; its baselines compile as nanoGPT does). Combo kernels launch
# independent small kernels as one (the weight casts, the embedding's gradient): GPT-2's graphed
# step -0.4 ms on the H100, LLaMA's -0.05 to -0.17, same losses (docs/perf-notes.md, 2026-11-26).
# Not where a recomputed checkpointed region ('mlp', 'block') holds PyTorch's MLP activation: Inductor
# makes that activation's kernel, the recomputed ones of different layers are independent of each
# other in the backward, and torch 2.11's Inductor combined 8 layers' into one, so their c_fc products
# were all made again at once (LLaMA's compiled graphed steps without this and with it: 'mlp' 3,902 -> 3,022
# MiB at the same speed, 'block' 4,114 -> 3,238 MiB and 0.2 ms faster). The Triton activation is not
# Inductor's to combine: there combo kernels cost no memory and save ~0.2 ms (GPT-2's 'mlp' and 'block';
# docs/perf-notes.md, 2026-11-26).
INDUCTOR_OPTIONS = {'combo_kernels': True}
# The min-cut partitioner's settings for those models: free to recompute in the backward, from what
# the forward keeps, a tensor that would be a kernel of its own there. By default it keeps every block
# matrix's bf16 cast from the forward for the backward's products, rather than cast the stored matrix
# again; with PyTorch's ops it keeps GELU's output too, which it then remakes. GPT-2 124M's graphed
# step keeps 167 MiB less with this, and is no slower (docs/perf-notes.md, 2026-11-26).
PARTITIONER_OPTIONS = {'ban_recompute_materialized_backward': False}

class InductorPartitioned(torch._TorchCompileInductorWrapper):
    """torch.compile's own Inductor backend for a mode and options, partitioning with
    PARTITIONER_OPTIONS: functorch's settings are the process's, and bench.py's baselines compile
    in the same process with the defaults."""

    def __call__(self, model_, inputs_, **kwargs):
        with functorch_config.patch(PARTITIONER_OPTIONS):  # the partition happens in this call
            return super().__call__(model_, inputs_, **kwargs)

def compile_model(model, mode='default'):
    """torch.compile(model, mode=mode) with INDUCTOR_OPTIONS on top (without combo kernels where a
    recomputed region holds PyTorch's MLP activation), partitioned with PARTITIONER_OPTIONS."""
    torch_activation = model.kernels[next(op for op in OVERRIDES['mlp'] if op in model.kernels)] == 'torch'
    combo = not (model.recompute in ('mlp', 'block') and torch_activation)
    return torch.compile(model, backend=InductorPartitioned(mode, dict(INDUCTOR_OPTIONS, combo_kernels=combo), None))
