"""
Muon (MomentUm Orthogonalized by Newton-Schulz; K. Jordan et al., 2024) for the weight
matrices of the transformer blocks, and AdamW for every other parameter, in one
optimizer that train.py schedules, clips, scales (fp16) and checkpoints like AdamW.

A Muon step for a matrix W (rows x cols) with gradient G:
    M <- mu M + (1 - mu) G                          momentum
    U  = mu M + (1 - mu) G  if nesterov, else M
    O  = newton_schulz(U)                           U with its singular values pushed to ~1
    W <- (1 - lr wd) W - lr max(1, rows / cols)^0.5 O
O moves every direction of W by about the same amount, whatever the gradient's scale
in it; the factor keeps the update's size per entry the same for tall matrices.
Muon is for hidden layers' matrices only: embeddings, the LM head and gains and biases
take AdamW (the groups with muon=False).

The work is the Newton-Schulz iteration, and this keeps it small:
- matrices of one shape (a tall one transposed to its wide form, as newton_schulz would
  do anyway) are orthogonalised as one stack: GPT-2's 48 block matrices are three
  stacks, each a few kernel launches per iteration step (kernels/newton_schulz.py).
  The momentum and the stacking are one launch per stack, and so is applying the
  result to the weights (kernels/muon_update.py);
- under DDP, each of the W ranks orthogonalises a 1/W share of each stack and the
  results are all-gathered (bf16), so every rank applies the same update for 1/W of the
  work. The momentum is kept for every matrix on every rank (the gradients are the same
  there after DDP's all-reduce): a checkpoint from rank 0 holds all of the state;
- the AdamW groups take kernels.adamw (one launch per group; torch's fused AdamW with backend='torch');
- on one CUDA GPU, each Muon group's work (about 60 launches for GPT-2) is replayed as one
  CUDA graph: eager, the GPU waits on the launches. A graph bakes in the addresses of the
  gradients, buffers and weights. In a training loop they repeat once the caching
  allocator has settled, every step or every other step (train.py's gradients alternate
  between two sets of blocks): a step runs eagerly the first time its addresses are seen,
  is captured the second time, and is replayed from then on.
"""
import torch
import torch.distributed as dist

import kernels


def _world_size():
    return dist.get_world_size() if dist.is_available() and dist.is_initialized() else 1


class Muon(torch.optim.Optimizer):
    """Param groups with muon=True (2-D matrices) take Muon: lr, momentum, nesterov,
    ns_steps, weight_decay; those with muon=False take AdamW: lr, betas, eps,
    weight_decay. backend: the Newton-Schulz kernel, 'auto' | 'triton' | 'torch',
    resolved once here.

    A step is skipped on the device where the attribute found_inf (a 0-d tensor, as
    GradScaler and train.py set it, torch's fused AdamW's protocol) is not 0: weights,
    momentum and AdamW state stay as they are, and no host sync is needed (but on the
    CPU, or with PyTorch's Newton-Schulz). Gradients must come unscaled (GradScaler's
    unscale_ first)."""
    _step_supports_amp_scaling = True  # GradScaler hands over found_inf instead of reading it on the host

    def __init__(self, param_groups, lr=0.02, momentum=0.95, nesterov=True, ns_steps=5, weight_decay=0.0,
                 betas=(0.9, 0.95), eps=1e-8, backend='auto', cuda_graphs=True):
        defaults = dict(muon=True, lr=lr, momentum=momentum, nesterov=nesterov, ns_steps=ns_steps,
                        weight_decay=weight_decay, betas=betas, eps=eps)
        super().__init__(param_groups, defaults)
        device_type = self.param_groups[0]['params'][0].device.type
        for group in self.param_groups:
            if group['muon'] and any(p.dim() != 2 for p in group['params']):
                raise ValueError("Muon takes 2-D weight matrices only: put other parameters in a group with muon=False")
            group['fused'] = device_type == 'cuda'  # AdamW's kernel; load_state_dict keeps its step counts on the GPU
        if backend not in kernels.BACKENDS:
            raise ValueError(f"backend must be one of {kernels.BACKENDS}, got {backend!r}")
        reason = kernels.backend.why_not_triton_on(device_type)
        if backend == 'triton' and reason:
            raise ValueError(f"Muon: backend='triton' cannot run: {reason}")
        self.backend = 'torch' if backend == 'torch' or reason else 'triton'
        # per Muon group: {'lr': the lr its graphs read, 'pool': their memory,
        # 'seen': {addresses and settings: graph or None}};
        # None under DDP (build the optimizer after init_process_group): the all-gather stays eager
        self.graphs = {} if (cuda_graphs and device_type == 'cuda' and self.backend == 'triton'
                             and _world_size() == 1) else None
        self.graph_replays = 0
        self.skip = None  # found_inf as the Muon kernels read it, at one address (a CUDA graph's)

    @torch.no_grad()
    def step(self, closure=None):
        loss = None
        if closure is not None:
            with torch.enable_grad():
                loss = closure()
        if getattr(self, 'grad_scale', None) is not None:
            raise ValueError("Muon takes unscaled gradients: call GradScaler.unscale_(optimizer) before its step()")
        found_inf = getattr(self, 'found_inf', None)
        if self.skip is None:
            self.skip = torch.zeros((), device=self.param_groups[0]['params'][0].device)
        if found_inf is None:
            self.skip.zero_()
        else:
            self.skip.copy_(found_inf)
        for group in self.param_groups:
            params = [p for p in group['params'] if p.grad is not None]
            if params:
                (self._muon_step if group['muon'] else self._adamw_step)(group, params)
        return loss

    def _muon_step(self, group, params):
        for p in params:
            if not self.state[p]:
                self.state[p]['momentum_buffer'] = torch.zeros_like(p)
        stacks = {}
        for p in params:
            stacks.setdefault(tuple(sorted(p.shape)), []).append(p)  # a tall one joins its wide form
        stacks = list(stacks.values())
        if self.graphs is None:
            self._muon_update(stacks, group, group['lr'])
        else:
            self._muon_update_graphed(stacks, group, params)

    def _muon_update_graphed(self, stacks, group, params):
        """_muon_update, replayed from the CUDA graph of these addresses and settings if
        there is one; else eagerly, and captured if they have been seen before."""
        baked = (tuple((p.grad.data_ptr(), self.state[p]['momentum_buffer'].data_ptr(), p.data_ptr()) for p in params),
                 group['momentum'], group['nesterov'], group['ns_steps'], group['weight_decay'])
        cache = self.graphs.get(id(group))
        if cache is None:  # the graphs of one group run one after another: they can share their memory
            cache = self.graphs[id(group)] = dict(lr=torch.zeros((), device=params[0].device),
                                                  pool=torch.cuda.graph_pool_handle(), seen={})
        if cache['seen'].get(baked):
            cache['lr'].fill_(group['lr'])
            cache['seen'][baked][0].replay()
            self.graph_replays += 1
            return
        self._muon_update(stacks, group, group['lr'])
        if baked not in cache['seen']:
            if len(cache['seen']) >= 8:  # addresses that do not repeat
                cache['seen'].clear()
            cache['seen'][baked] = None
            return
        graph, side = torch.cuda.CUDAGraph(), torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # not torch.cuda.graph(): it empties the allocator's cache, which moves
            graph.capture_begin(cache['pool'])  # the next step's gradients to new addresses
            self._muon_update(stacks, group, cache['lr'])
            graph.capture_end()
        torch.cuda.current_stream().wait_stream(side)
        cache['seen'][baked] = (graph, kernels.device_tables())  # the address tables the graph reads stay alive

    def _muon_update(self, stacks, group, lr):
        for members in stacks:
            U, sumsq = kernels.muon_momentum([p.grad for p in members],
                                             [self.state[p]['momentum_buffer'] for p in members],
                                             group['momentum'], group['nesterov'], backend=self.backend, skip=self.skip)
            O = self._orthogonalise(U, sumsq, group['ns_steps'])
            kernels.muon_apply(members, O, lr, group['weight_decay'], backend=self.backend, skip=self.skip)

    def _orthogonalise(self, U, sumsq, steps):
        """newton_schulz of each matrix of the (B, M, N) stack U (sumsq: its squares summed in
        parts, (B, n)); under DDP this rank's share of the stack, then everyone's results
        gathered."""
        if _world_size() == 1:
            return kernels.newton_schulz(U, steps, backend=self.backend, sumsq=sumsq)
        rank, world = dist.get_rank(), dist.get_world_size()
        share = -(-len(U) // world)  # matrices per rank; the last ranks may have fewer, or none
        out = U.new_zeros(share, *U.shape[1:])
        mine = U[rank * share:(rank + 1) * share]
        if len(mine):
            out[:len(mine)] = kernels.newton_schulz(mine, steps, backend=self.backend,
                                                    sumsq=sumsq[rank * share:(rank + 1) * share])
        gathered = out.new_empty(share * world, *U.shape[1:])
        dist.all_gather_into_tensor(gathered, out)
        return gathered[:len(U)]

    def _adamw_step(self, group, params):
        for p in params:
            if not self.state[p]:  # the step count on the GPU for the fused kernels, on the CPU for foreach
                self.state[p].update(kernels.adamw_state(p, group['fused']))
        state = [self.state[p] for p in params]
        beta1, beta2 = group['betas']
        kernels.adamw(params, [p.grad for p in params], [s['exp_avg'] for s in state], [s['exp_avg_sq'] for s in state],
                      [s['step'] for s in state], lr=group['lr'], beta1=beta1, beta2=beta2,
                      weight_decay=group['weight_decay'], eps=group['eps'], found_inf=self.skip,
                      # 'auto': torch's step for what the kernel cannot take
                      backend='torch' if self.backend == 'torch' else 'auto')
