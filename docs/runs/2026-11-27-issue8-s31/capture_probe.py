"""Why kernels/choose.py's CUDA-graph timing of the embedding case failed (calls 3-4, both implementations): each
implementation's forward + backward (choose._run) first with torch's sync debug mode set to error (a host sync
cannot be captured), then captured alone in a CUDA graph, the first error printed whole.
Runs on the tree of the branch issue8-embedding-kernel (kernels/embedding.py is not on main)."""
import sys
import traceback

import torch

sys.path.insert(0, '.')
import kernels.choose as choose  # noqa: E402

shapes, make, fn = choose.op_cases(['embedding'], 12, 1024, 768, 12, None, 50304, 3072, False, torch.bfloat16,
                                   'cuda')['embedding']
inputs = make()
for be in ('torch', 'triton'):
    f = fn(be)
    for compiled in (False, True):
        g = torch.compile(f) if compiled else f
        with torch.autocast('cuda', dtype=torch.bfloat16):
            run = lambda: choose._run(g, inputs, True)
            run()
            torch.cuda.synchronize()
            try:
                torch.cuda.set_sync_debug_mode("error")
                run()
                print(be, 'compiled' if compiled else 'eager', 'no host sync')
            except Exception:
                print(be, 'compiled' if compiled else 'eager', 'SYNC:', traceback.format_exc()[-1500:])
            finally:
                torch.cuda.set_sync_debug_mode(0)
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            try:
                with torch.cuda.stream(side):
                    run()
                    graph = torch.cuda.CUDAGraph()
                    with torch.cuda.graph(graph, stream=side):
                        run()
                torch.cuda.current_stream().wait_stream(side)
                graph.replay(); torch.cuda.synchronize()
                print(be, 'compiled' if compiled else 'eager', 'captured and replayed', flush=True)
            except Exception:
                print(be, 'compiled' if compiled else 'eager', 'CAPTURE:', traceback.format_exc()[-2500:], flush=True)
                sys.exit(0)  # the process's CUDA state is not to be trusted after a failed capture
