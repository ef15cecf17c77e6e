"""
The whole training step (forward, backward, optimizer) as one CUDA graph.

An eager or compiled step launches a few hundred kernels from Python; the GPU waits
wherever the host falls behind, and at every step's start after a synchronisation.
Recorded once as a CUDA graph, the step is replayed with one launch: the GPU runs its
kernels back to back, and eager models can use kernels whose Python launch path is slow.

What the step reads and writes must stay at fixed addresses: the caller copies each batch
into the same input tensors and reads results from tensors the step updates in place.
Nothing in the step may synchronise with the host (no .item(), no data-dependent shapes).
The optimizer's learning rates become tensors (a replay reads the current value; set them
with set_lr) and its groups capturable. The first `warmup` calls run the step as it is,
on the stream the graph is recorded on (lazy initialisation, autotuning and the optimizer's
state happen there, as CUDA graphs require); the next call records it and replays it.

Under DDP the gradients' all-reduces are recorded too (NCCL's collectives can be). Two
conditions, both PyTorch's: build DDP with this graph's stream current (its gradient hooks
run on the stream they were made on, and a recording must hold all the step's work), and
warm up at least 11 steps (DDP times its first ten synchronised steps with CUDA events the
host reads back, which a recording cannot hold). And free the graph (release()) before
destroy_process_group: NCCL's communicator destroy waits forever on a communicator whose
kernels a live graph holds (pytorch/pytorch#115388; seen here at 2 ranks, not at 1).

The warm-up steps and the recording run with cuBLAS without its workspace
(cublas_without_workspace), unless the user set CUBLAS_WORKSPACE_CONFIG.
"""
import os
import contextlib

import torch

import kernels


@contextlib.contextmanager
def cublas_without_workspace():
    """cuBLAS (and cuBLASLt, which shares its workspace) without a workspace inside the block,
    unless the user set CUBLAS_WORKSPACE_CONFIG (which then holds everywhere). For recording a
    step: GPT-2's graphed step then has no cooperative cuBLAS kernels and the memsets before them
    (~45 nodes a step), and runs 0.12-0.45 ms faster on the H100. Not for steps launched from
    Python: torch 2.11 reads the variable at every cuBLAS call, and with it set each product costs
    ~35-45 us more host time, ~5 ms of an eager GPT-2 step (docs/perf-notes.md, 2026-11-26).
    Where torch has setters for the sizes (torch.backends.cuda, 2.13), which take precedence over
    the variables, they are used instead."""
    if 'CUBLAS_WORKSPACE_CONFIG' in os.environ:
        yield
        return
    if hasattr(torch.backends.cuda, 'cublas_workspace_size'):  # torch >= 2.13
        sizes = torch.backends.cuda.cublas_workspace_size, torch.backends.cuda.cublaslt_workspace_size
        before = [size() for size in sizes]
        for size in sizes:
            size(0)
        restore = lambda: [size(b) for size, b in zip(sizes, before)]
    else:  # torch 2.11: the variables, read at every call
        ours = {'CUBLAS_WORKSPACE_CONFIG': ':0:0'}
        if 'CUBLASLT_WORKSPACE_SIZE' not in os.environ:  # larger than cuBLAS's, Lt warns and takes cuBLAS's
            ours['CUBLASLT_WORKSPACE_SIZE'] = '0'
        os.environ.update(ours)
        restore = lambda: [os.environ.pop(name) for name in ours]
    try:
        yield
    finally:
        restore()
        if torch.cuda.is_initialized():  # the streams used inside may keep an empty workspace, which a later
            torch._C._cuda_clearCublasWorkspaces()  # call at the default size could be handed: dropped


def set_lr(group, lr):
    """An optimizer group's learning rate: in place where it is a tensor a CUDA graph reads."""
    if torch.is_tensor(group['lr']):
        group['lr'].fill_(lr)
    else:
        group['lr'] = lr


class StepGraph:

    DDP_WARMUP = 11

    def __init__(self, step, optimizer, warmup=3, stream=None):
        self.step, self.optimizer, self.warmup = step, optimizer, warmup
        self.calls, self.replays, self.graph, self.tables = 0, 0, None, ()
        self.stream = stream or torch.cuda.Stream()

    def __call__(self):
        self.stream.wait_stream(torch.cuda.current_stream())  # the batch copied in, the learning rate set
        with torch.cuda.stream(self.stream):
            if self.graph is None:
                with cublas_without_workspace():
                    if self.calls < self.warmup:
                        self.step()
                    else:
                        self._record()
            if self.graph is not None:
                self.graph.replay()
                self.replays += 1
        torch.cuda.current_stream().wait_stream(self.stream)
        self.calls += 1

    def _record(self):
        for group in self.optimizer.param_groups:
            group['capturable'] = True  # the step count stays on the GPU (fused AdamW keeps it there anyway)
            group['lr'] = torch.tensor(float(group['lr']), device=self.stream.device)
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph, stream=self.stream):
            self.step()
        self.tables = kernels.device_tables()  # the address tables its kernels read (AdamW's) live as long as it

    def release(self):
        """Free the recorded graph (it holds the NCCL kernels) once training is over."""
        if self.graph is not None:
            self.graph.reset()
            self.graph, self.tables = None, ()
