"""Probe (issue 8, eleventh session): GELU in the epilogue of a Triton matmul, against cuBLAS's
matmul followed by our GELU kernel, at GPT-2's MLP shapes (12 x 1024 tokens, 768 -> 3072, bf16).
  forward:  h = x W_fc^T (cuBLAS) ; g = gelu(h) (kernels.gelu_fwd)      vs  one kernel writing h and g
  backward: dg = dy W_proj (cuBLAS) ; dh = dg gelu'(h) (kernels.gelu_bwd) vs  one kernel reading h, writing dh
Each timed as a CUDA graph of REPS calls, variants in turn for ROUNDS rounds, median us per call."""
import itertools, statistics, sys, time
import torch
import triton
import triton.language as tl
from triton.tools.tensor_descriptor import TensorDescriptor
sys.path.insert(0, '.')
from kernels.gelu import gelu_fwd, gelu_bwd, _gelu_and_grad

M, K, N = 12 * 1024, 768, 3072
SMS = torch.cuda.get_device_properties(0).multi_processor_count
REPS, ROUNDS = 20, 5

@triton.jit
def _tile_of(tile, n_m, n_n, GROUP_M: tl.constexpr):
    """Tiles in groups of GROUP_M row blocks, so neighbours share the B slab in L2."""
    per_group = GROUP_M * n_n
    first_m = (tile // per_group) * GROUP_M
    size = min(n_m - first_m, GROUP_M)
    return first_m + (tile % per_group) % size, (tile % per_group) // size

@triton.jit
def mm_epilogue_kernel(a_desc, b_desc, c_desc, d_desc, aux_desc, M, N, K,
                       B_NK: tl.constexpr, MODE: tl.constexpr, SUBTILE: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr,
                       GROUP_M: tl.constexpr, PROGRAMS: tl.constexpr, FLATTEN: tl.constexpr, AUX_EARLY: tl.constexpr):
    """acc = A B (B given as (N, K) if B_NK else (K, N)); MODE 0: C = acc; 1: C = acc, D = gelu(C);
    2: C = acc * gelu'(aux)  (aux = h, the forward's pre-activation). PROGRAMS programs walk the
    tiles (PROGRAMS = the tile count: one tile each, several programs per SM overlap their epilogues);
    AUX_EARLY: aux's tile is loaded before the main loop (in flight during it)."""
    n_m, n_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    k_tiles = tl.cdiv(K, BLOCK_K)
    for tile in tl.range(tl.program_id(0), n_m * n_n, PROGRAMS, flatten=FLATTEN):
        pid_m, pid_n = _tile_of(tile, n_m, n_n, GROUP_M)
        off_m, off_n = pid_m * BLOCK_M, pid_n * BLOCK_N
        acc = tl.zeros([BLOCK_M, BLOCK_N], tl.float32)
        aux = aux_desc.load([off_m, off_n]) if (AUX_EARLY and MODE == 2) else None
        for ki in range(k_tiles):
            a = a_desc.load([off_m, ki * BLOCK_K])
            if B_NK:
                acc = tl.dot(a, b_desc.load([off_n, ki * BLOCK_K]).T, acc)
            else:
                acc = tl.dot(a, b_desc.load([ki * BLOCK_K, off_n]), acc)
        if AUX_EARLY and MODE == 2:
            c_desc.store([off_m, off_n], (acc * _gelu_and_grad(aux.to(tl.float32), False)[1]).to(c_desc.dtype))
        elif SUBTILE:
            parts = tl.split(tl.permute(tl.reshape(acc, (BLOCK_M, 2, BLOCK_N // 2)), (0, 2, 1)))
            _epilogue(parts[0], c_desc, d_desc, aux_desc, off_m, off_n, MODE)
            _epilogue(parts[1], c_desc, d_desc, aux_desc, off_m, off_n + BLOCK_N // 2, MODE)
        else:
            _epilogue(acc, c_desc, d_desc, aux_desc, off_m, off_n, MODE)

@triton.jit
def _epilogue(acc, c_desc, d_desc, aux_desc, off_m, off_n, MODE: tl.constexpr):
    if MODE == 2:
        h = aux_desc.load([off_m, off_n]).to(tl.float32)
        _, slope = _gelu_and_grad(h, False)
        c_desc.store([off_m, off_n], (acc * slope).to(c_desc.dtype))
    else:
        h = acc.to(c_desc.dtype)
        c_desc.store([off_m, off_n], h)
        if MODE == 1:
            g, _ = _gelu_and_grad(h.to(tl.float32), False)
            d_desc.store([off_m, off_n], g.to(d_desc.dtype))

def triton_mm(a, b, b_nk, mode, cfg, aux=None):
    BM, BN, BK, stages, warps, sub, flat, per_sm, early = cfg
    Mx, Kx = a.shape
    Nx = b.shape[0] if b_nk else b.shape[1]
    c = torch.empty(Mx, Nx, device=a.device, dtype=a.dtype)
    d = torch.empty_like(c) if mode == 1 else c
    eb = (BM, BN // 2) if sub else (BM, BN)
    a_d = TensorDescriptor.from_tensor(a, [BM, BK])
    b_d = TensorDescriptor.from_tensor(b, [BN, BK] if b_nk else [BK, BN])
    c_d, d_d = TensorDescriptor.from_tensor(c, list(eb)), TensorDescriptor.from_tensor(d, list(eb))
    x_d = TensorDescriptor.from_tensor(aux if aux is not None else c, list(eb))
    tiles = triton.cdiv(Mx, BM) * triton.cdiv(Nx, BN)
    programs = tiles if per_sm == 0 else min(SMS * per_sm, tiles)
    mm_epilogue_kernel[(programs,)](a_d, b_d, c_d, d_d, x_d, Mx, Nx, Kx, B_NK=b_nk, MODE=mode, SUBTILE=sub,
                                          BLOCK_M=BM, BLOCK_N=BN, BLOCK_K=BK, GROUP_M=8, PROGRAMS=programs,
                                          FLATTEN=flat, AUX_EARLY=early, num_stages=stages, num_warps=warps)
    return (c, d) if mode == 1 else c

def graph_time(fn):
    fn(); torch.cuda.synchronize()
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        fn()
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(REPS):
            fn()
    def run():
        g.replay(); torch.cuda.synchronize()
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        times = []
        for _ in range(5):
            e0.record(); g.replay(); e1.record(); e1.synchronize()
            times.append(e0.elapsed_time(e1) * 1000 / REPS)
        return statistics.median(times)
    return run

def main():
    torch.manual_seed(0)
    dt = torch.bfloat16
    x = torch.randn(M, K, device='cuda', dtype=dt)
    w_fc = (torch.randn(N, K, device='cuda') * 0.02).to(dt)       # (3072, 768), as nn.Linear keeps it
    dy = torch.randn(M, K, device='cuda', dtype=dt) * 1e-3
    w_proj = (torch.randn(K, N, device='cuda') * 0.02).to(dt)     # (768, 3072)
    h_ref = torch.mm(x, w_fc.T)
    g_ref = gelu_fwd(h_ref, None, 'none')
    dg = torch.mm(dy, w_proj)
    dh_ref, _ = gelu_bwd(dg, h_ref, None, 'none')
    dh64 = (dy.double() @ w_proj.double()) * torch.ops.aten.gelu_backward(torch.ones_like(h_ref, dtype=torch.float64), h_ref.double())

    variants = {
        'fwd cublas mm': lambda: torch.mm(x, w_fc.T),
        'fwd cublas mm + gelu': lambda: gelu_fwd(torch.mm(x, w_fc.T), None, 'none'),
        'bwd cublas mm': lambda: torch.mm(dy, w_proj),
        'bwd cublas mm + gelu_bwd': lambda: gelu_bwd(torch.mm(dy, w_proj), h_ref, None, 'none'),
        'gelu_fwd alone': lambda: gelu_fwd(h_ref, None, 'none'),
        'gelu_bwd alone': lambda: gelu_bwd(dg, h_ref, None, 'none'),
    }
    # (BM, BN, BK, stages, warps, subtile, flatten, programs per SM (0: one per tile), aux early)
    cfgs = [(128, 256, 64, 3, 8, True, True, 1, False), (256, 128, 64, 3, 8, True, True, 1, False),
            (128, 128, 64, 2, 8, False, False, 0, False), (128, 128, 64, 3, 8, False, False, 0, False),
            (128, 128, 64, 2, 4, False, False, 0, False), (128, 128, 64, 2, 8, False, True, 2, False),
            (128, 128, 64, 2, 8, False, False, 0, True), (128, 256, 64, 2, 8, True, False, 0, False),
            (64, 256, 64, 3, 4, False, False, 0, False), (128, 64, 64, 3, 4, False, False, 0, False)]
    for cfg in cfgs:
        name = ('x'.join(map(str, cfg[:3])) + f' s{cfg[3]} w{cfg[4]}' + (' sub' if cfg[5] else '') + (' flat' if cfg[6] else '')
                + (f' {cfg[7]}/SM' if cfg[7] else ' 1/tile') + (' auxearly' if cfg[8] else ''))
        try:
            t0 = time.time()
            h, g = triton_mm(x, w_fc, True, 1, cfg)
            dh = triton_mm(dy, w_proj, False, 2, cfg, aux=h_ref)
            torch.cuda.synchronize()
            err = dict(h=(h.float() - h_ref.float()).abs().max().item(), g=(g.float() - g_ref.float()).abs().max().item(),
                       dh_fused=((dh.double() - dh64).abs().max().item()), dh_unfused=(dh_ref.double() - dh64).abs().max().item())
            print(f'{name}: built in {time.time() - t0:.1f} s, max err {err}', flush=True)
        except Exception as e:  # a config that does not build (shared memory) is reported and skipped
            print(f'{name}: failed: {type(e).__name__}: {str(e)[:200]}', flush=True)
            continue
        variants[f'fwd triton {name} (mm only)'] = lambda cfg=cfg: triton_mm(x, w_fc, True, 0, cfg)
        variants[f'fwd triton {name} (mm + gelu)'] = lambda cfg=cfg: triton_mm(x, w_fc, True, 1, cfg)
        variants[f'bwd triton {name} (mm * gelu\')'] = lambda cfg=cfg: triton_mm(dy, w_proj, False, 2, cfg, aux=h_ref)
    runs = {k: graph_time(f) for k, f in variants.items()}
    results = {k: [] for k in runs}
    for _ in range(ROUNDS):
        for k, run in runs.items():
            results[k].append(run())
    flop = 2 * M * N * K
    print(f'\nM={M} K={K} N={N}; us per call, median of {ROUNDS} rounds (each the median of 5 graph replays of {REPS} calls)')
    for k, v in results.items():
        med = statistics.median(v)
        print(f'{k:55s} {med:8.1f} us  {flop / med / 1e6:6.0f} TFLOP/s   rounds {" ".join(f"{t:.1f}" for t in v)}')

if __name__ == '__main__':
    main()
