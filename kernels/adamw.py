"""
AdamW's step for every tensor of a parameter group in one launch: torch.optim.AdamW's update (decoupled weight
decay). No gradient: an optimizer's step, in place.

Per parameter w with gradient g, exp_avg m, exp_avg_sq v and step count s (incremented first):
    w <- (1 - lr wd) w                                                    fp32
    m <- beta1 m + (1 - beta1) g                                          fp64, rounded once to fp32
    v <- beta2 v + (1 - beta2) g^2                                        fp64, rounded once to fp32
    w <- w - lr / (1 - beta1^s) * m / (sqrt(v) / sqrt(1 - beta2^s) + eps) fp32, the corrections from fp64
The moments rounded once from fp64, the closest fp32 holds: in fp32 they would round two or three times an element a
step, and the tests hold this step to torch's fused one on the GPU (whose arithmetic differs between torch releases:
doubles in some, fp32 FMAs in others) and its foreach one on the CPU.
found_inf (a device scalar, as train.py sets it on the optimizer): where it is not 0 nothing changes and the step
counts go back to what they were, with no host sync.
copies: per weight None or its copy in a narrower dtype (bf16, fp16: the one its products read, kernels/linear.py's
matmul_copy), written with the new weight rounded to nearest even, as Tensor.to rounds: 2 bytes more a weight,
where a cast of its own would read 4 and write 2.

Why a kernel of our own: the step moves 28 bytes a parameter, and torch's fused AdamW moves them well below a plain
streaming pass's bandwidth; this one comes closer, measured faster at GPT-2's shapes (docs/perf-notes.md). Only the
moments are in fp64: the decay and the denominator in fp64 too measure slower. Each program takes BLOCK elements of
one tensor; three small tables on the device say which: the tensors' addresses (weight, gradient, m, v, step count,
copy), per program its tensor, first element and the tensor's size, and the hyperparameters in fp64. Each program
makes its tensor's bias corrections from the step count on the device, so a CUDA graph of the step replays with the
counts moving.

Constraints: weights, gradients and states fp32, contiguous, of matching shapes, on one device (a GPU, or the CPU
under Triton's interpreter); the step counts 0-d fp32 tensors there; lr a float or a 0-d tensor there; betas
floats. Anything else (other dtypes; the step counts on the CPU, as torch keeps them for CUDA weights without fused
or capturable) runs adamw_ref, with one printed line where Triton could have run. AdamW below takes
torch.optim.AdamW's own step for amsgrad, maximize, differentiable, complex weights, FSDP's sharded weights,
sparse gradients and GradScaler's grad_scale (fp16).
"""
import torch
from torch.distributed.tensor import DTensor
from torch.optim.adamw import adamw as torch_adamw

from kernels.backend import triton, tl, use_triton, device_table, device_scalar


def adamw_ref(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, lr, beta1, beta2, weight_decay, eps,
              found_inf=None):
    """torch.optim.AdamW's functional step: its fused kernel where the tensors and step counts are on a GPU, foreach
    otherwise (which has no found_inf, and takes lr as a number: both read on the host there, so not in a CUDA
    graph's recording, which would keep the host's values)."""
    fused = params[0].is_cuda and state_steps[0].device == params[0].device
    if not fused:
        if params[0].is_cuda and torch.cuda.is_current_stream_capturing():
            raise RuntimeError("adamw: step counts on the CPU cannot be recorded in a CUDA graph "
                               "(as torch.optim.AdamW: fused=True or capturable=True keeps them on the GPU)")
        if found_inf is not None and found_inf.item():
            return
        lr = lr.item() if torch.is_tensor(lr) else lr
    torch_adamw(params, grads, exp_avgs, exp_avg_sqs, [], state_steps, foreach=not fused, fused=fused,
                found_inf=found_inf if fused else None, has_complex=any(torch.is_complex(p) for p in params),
                amsgrad=False, beta1=beta1, beta2=beta2, lr=lr, weight_decay=weight_decay, eps=eps, maximize=False)


@triton.jit
def _adamw_kernel(
    ADDRESSES,  # (6, num_tensors) int64: per tensor the address of its weight, gradient, exp_avg, exp_avg_sq,
                # step count, and of the weight's low-precision copy (0: none)
    BLOCKS,     # (3, programs) int64: per program its tensor, its first element, and that tensor's size
    W, G, M, V, S,  # the first weight, gradient, exp_avg, exp_avg_sq and step count: each list's pointer type
    C,          # the first copy (its pointer type), or None where no weight has one
    HYPER,      # (4,) fp64: beta1, beta2, weight_decay, eps (Triton would pass numbers in fp32)
    LR,         # () the learning rate, read on the device so that each replay of a CUDA graph takes the current one
    SKIP,       # () found_inf, or None: not 0 = leave everything as it is
    num_tensors, programs,
    BLOCK: tl.constexpr,
):
    if SKIP is not None:
        if tl.load(SKIP) != 0:
            return
    pid = tl.program_id(0)
    t = tl.load(BLOCKS + pid)
    start = tl.load(BLOCKS + programs + pid)
    n = tl.load(BLOCKS + 2 * programs + pid)
    w_ptr = tl.load(ADDRESSES + t).to(W.dtype)
    g_ptr = tl.load(ADDRESSES + num_tensors + t).to(G.dtype)
    m_ptr = tl.load(ADDRESSES + 2 * num_tensors + t).to(M.dtype)
    v_ptr = tl.load(ADDRESSES + 3 * num_tensors + t).to(V.dtype)
    s = tl.load(tl.load(ADDRESSES + 4 * num_tensors + t).to(S.dtype)).to(tl.float64)
    beta1, beta2 = tl.load(HYPER), tl.load(HYPER + 1)
    weight_decay, eps = tl.load(HYPER + 2), tl.load(HYPER + 3)
    lr = tl.load(LR).to(tl.float32)
    # per program the bias corrections in fp64 (in fp32, 1 - beta2^s keeps few digits for beta2 near 1); per element
    # the moments in fp64, rounded once: the closest fp32 holds (in fp32 they would round two or three times)
    step_size = tl.div_rn(lr, (1 - tl.exp2(s * tl.log2(beta1))).to(tl.float32))
    bias2_sqrt = tl.sqrt(1 - tl.exp2(s * tl.log2(beta2))).to(tl.float32)
    decay = 1.0 - lr * weight_decay.to(tl.float32)  # one rounding of w, as torch's foreach step
    offs = start + tl.arange(0, BLOCK)
    mask = offs < n
    w = tl.load(w_ptr + offs, mask=mask)
    g = tl.load(g_ptr + offs, mask=mask).to(tl.float64)
    m = (beta1 * tl.load(m_ptr + offs, mask=mask) + (1 - beta1) * g).to(tl.float32)
    v = (beta2 * tl.load(v_ptr + offs, mask=mask) + (1 - beta2) * g * g).to(tl.float32)
    w *= decay
    w = tl.fma(-step_size, tl.div_rn(m, tl.div_rn(tl.sqrt_rn(v), bias2_sqrt) + eps.to(tl.float32)), w)  # as addcdiv_
    tl.store(m_ptr + offs, m, mask=mask)
    tl.store(v_ptr + offs, v, mask=mask)
    tl.store(w_ptr + offs, w, mask=mask)
    if C is not None:
        c_addr = tl.load(ADDRESSES + 5 * num_tensors + t)
        if c_addr != 0:
            tl.store(c_addr.to(C.dtype) + offs, w.to(C.dtype.element_ty), mask=mask)


# Elements per program (4 warps: 8 fp32 a thread, two 16-byte accesses). More per program (a loop of 2, 4 or 8 such
# blocks, or 2048 or 4096 with 8 warps) measured slower over GPT-2's 75 tensors (docs/perf-notes.md)
BLOCK, NUM_WARPS = 1024, 4


def _blocks(numels):
    """Rows of the per-program table: each program's tensor, first element, and that tensor's size."""
    rows = [[], [], []]
    for t, n in enumerate(numels):
        for start in range(0, n, BLOCK):
            rows[0].append(t)
            rows[1].append(start)
            rows[2].append(n)
    return rows


def _problem(params, grads, exp_avgs, exp_avg_sqs, state_steps, copies, lr, beta1, beta2):
    """Why the kernel cannot take these tensors, or None."""
    device = params[0].device
    lists = (params, grads, exp_avgs, exp_avg_sqs)
    if len({len(ts) for ts in lists + (state_steps,)}) != 1:
        return "the lists differ in length"
    if any(t.dtype != torch.float32 or not t.is_contiguous() or t.device != device for ts in lists for t in ts):
        return "weights, gradients and states not all contiguous fp32 on one device"
    if any(not (p.shape == g.shape == m.shape == v.shape) for p, g, m, v in zip(*lists)):
        return "a gradient or state differs in shape from its weight"
    if any(s.numel() != 1 or s.dtype != torch.float32 or s.device != device for s in state_steps):
        return "step counts not 0-d fp32 tensors on the weights' device"
    if torch.is_tensor(lr) and (lr.numel() != 1 or lr.device != device):
        return "lr a tensor not on the weights' device"
    if torch.is_tensor(beta1) or torch.is_tensor(beta2):
        return "betas as tensors"
    if not (0 <= beta1 < 1 and 0 <= beta2 < 1):  # the kernel's beta^s goes through log2(beta)
        return "betas outside [0, 1)"
    if len({c.dtype for c in copies if c is not None}) > 1:
        return "copies in more than one dtype"
    return None


def _check_copies(params, copies):
    """Copies the kernel or copy_weights could not write are an error, whichever step runs."""
    if len(copies) != len(params):
        raise ValueError(f"adamw: {len(copies)} copies for {len(params)} weights")
    for p, c in zip(params, copies):
        if c is not None and (c.shape != p.shape or c.device != p.device or not c.is_contiguous()
                              or c.dtype not in (torch.bfloat16, torch.float16)):
            raise ValueError(f"adamw: a copy {tuple(c.shape)} {c.dtype} on {c.device} for a weight {tuple(p.shape)} on "
                             f"{p.device}: copies are contiguous bf16 or fp16 tensors "
                             f"of their weights' shape and device")


def kept_copies(params):
    """Each weight's copy for its products (kernels/linear.py's matmul_copy), or None."""
    return [getattr(p, "matmul_copy", None) for p in params]


def copy_weights(params, copies):
    """Each copy written from its weight (where torch's step ran instead of the kernel)."""
    pairs = [(c, p) for p, c in zip(params, copies) if c is not None]
    if pairs:
        torch._foreach_copy_(*map(list, zip(*pairs)))


@torch.no_grad()
def adamw(params, grads, exp_avgs, exp_avg_sqs, state_steps, *, lr, beta1, beta2, weight_decay, eps,
          found_inf=None, copies=None, backend="auto"):
    """torch.optim.adamw.adamw(params, grads, exp_avgs, exp_avg_sqs, [], state_steps, fused=True, ...) without
    amsgrad or maximize, in place, and the weights' copies written (see the module's docstring), by the Triton kernel
    or PyTorch as `backend` says (see kernels/backend.py)."""
    if not params:
        return
    copies = [None] * len(params) if copies is None else copies
    _check_copies(params, copies)
    limit = _problem(params, grads, exp_avgs, exp_avg_sqs, state_steps, copies, lr, beta1, beta2)
    if not use_triton("adamw", backend, params[0], limit=limit):
        adamw_ref(params, grads, exp_avgs, exp_avg_sqs, state_steps, lr=lr, beta1=beta1, beta2=beta2,
                  weight_decay=weight_decay, eps=eps, found_inf=found_inf)
        return copy_weights(params, copies)
    device = params[0].device
    torch._foreach_add_(state_steps, 1)
    first_copy = next((c for c in copies if c is not None), None)
    addresses = device_table([[t.data_ptr() for t in ts] for ts in (params, grads, exp_avgs, exp_avg_sqs, state_steps)]
                             + [[0 if c is None else c.data_ptr() for c in copies]], device)
    numels = tuple(p.numel() for p in params)
    blocks = device_table(lambda: _blocks(numels), device, key=("adamw blocks", BLOCK, numels))
    skip = None if found_inf is None else device_scalar(found_inf, device)
    programs = blocks.shape[1]
    if programs:
        # launched as muon_update's kernels are: an optimizer's step, never traced by torch.compile
        _adamw_kernel[(programs,)](
            addresses, blocks, params[0], grads[0], exp_avgs[0], exp_avg_sqs[0], state_steps[0], first_copy,
            device_table([[beta1, beta2, weight_decay, eps]], device, dtype=torch.float64),
            device_scalar(lr, device), skip,
            len(params), programs, BLOCK=BLOCK, num_warps=NUM_WARPS)
    if found_inf is not None:  # as torch's fused step: a skipped step does not count
        torch._foreach_sub_(state_steps, [skip] * len(state_steps))


def adamw_state(p, on_device):
    """A weight's AdamW state as torch.optim.AdamW starts it (its _init_group is private to torch): the step count on
    the weight's device where the step is fused or capturable, else on the CPU."""
    return dict(step=torch.zeros((), dtype=torch.float32, device=p.device if on_device else "cpu"),
                exp_avg=torch.zeros_like(p, memory_format=torch.preserve_format),
                exp_avg_sq=torch.zeros_like(p, memory_format=torch.preserve_format))


class AdamW(torch.optim.AdamW):
    """torch.optim.AdamW with its step by adamw() above: the same arguments and state (a state_dict loads into
    either), learning rates as floats or 0-d device tensors (a CUDA graph's, step_graph.set_lr), found_inf read
    where train.py sets it. amsgrad, maximize, differentiable, complex weights, FSDP's sharded weights (DTensors),
    sparse gradients and GradScaler's grad_scale (fp16) take torch.optim.AdamW's own step. A weight with a
    `matmul_copy` (kernels/linear.py) gets it written at each step, whichever step ran. backend: 'auto' |
    'triton' | 'torch', as for every op."""

    def __init__(self, params, *args, backend="auto", **kwargs):
        super().__init__(params, *args, **kwargs)
        self.backend = backend

    @torch.no_grad()
    def step(self, closure=None):
        if getattr(self, "grad_scale", None) is not None or any(
                g["amsgrad"] or g["maximize"] or g["differentiable"] for g in self.param_groups) or any(
                torch.is_complex(p) or isinstance(p, DTensor) or (p.grad is not None and p.grad.is_sparse)
                for g in self.param_groups for p in g["params"]):
            loss = super().step(closure)
            params = [p for g in self.param_groups for p in g["params"]]
            copy_weights(params, kept_copies(params))
            return loss
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        for group in self.param_groups:
            params = [p for p in group["params"] if p.grad is not None]
            for p in params:
                if not self.state[p]:
                    self.state[p].update(adamw_state(p, group["fused"] or group["capturable"]))
            states = [self.state[p] for p in params]
            beta1, beta2 = group["betas"]
            adamw(params, [p.grad for p in params], [s["exp_avg"] for s in states], [s["exp_avg_sq"] for s in states],
                  [s["step"] for s in states], lr=group["lr"], beta1=beta1, beta2=beta2,
                  weight_decay=group["weight_decay"], eps=group["eps"], found_inf=getattr(self, "found_inf", None),
                  copies=kept_copies(params), backend=self.backend)
        return loss
