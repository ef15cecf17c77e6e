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
(kernels.backend.cublas_without_workspace), unless the user set CUBLAS_WORKSPACE_CONFIG.
"""
import torch

import kernels
from kernels.backend import cublas_without_workspace


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
