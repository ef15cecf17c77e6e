# Attention variants side by side on the GPU: time (CUDA graph median) and agreement.
# usage: python .devdata/exp/exp.py variant[,variant...] [shape_index,...]
import importlib.util, os, sys, time, json, math
import torch
import torch.nn.functional as F
sys.path.insert(0, os.getcwd())
import triton

GEN = '.devdata/exp/gen'
os.makedirs(GEN, exist_ok=True)
base_src = open('.devdata/exp/attn_base.py').read()
cur_src = open('kernels/attention.py').read()
SRC = {
    'base': base_src,
    'cur': cur_src,
    'base_ws': base_src.replace('tl.range(lo, hi, BLOCK_N)', 'tl.range(lo, hi, BLOCK_N, warp_specialize=True)'),
}
for name in os.listdir('.devdata/exp'):
    if name.startswith('attn_') and name.endswith('.py') and name != 'attn_base.py':
        SRC[name[5:-3]] = open('.devdata/exp/' + name).read()

def load(name):
    path = f'{GEN}/v_{name}.py'
    with open(path, 'w') as f:
        f.write(SRC[name])
    spec = importlib.util.spec_from_file_location(f'v_{name}', path)
    m = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(m)
    return m

def gpu_us(fn, calls=10):
    """GPU kernel time per fn() from the profiler (CUPTI), and {kernel: us per call}."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
    per = {}
    for e in prof.events():
        if e.device_type == torch.autograd.DeviceType.CUDA:
            per[e.name[:40]] = per.get(e.name[:40], 0.0) + e.time_range.elapsed_us() / calls
    return sum(per.values()), per

SHAPES = [(12, 12, 12, 1024, 64), (4, 16, 16, 4096, 128), (8, 16, 16, 2048, 64), (12, 12, 4, 1024, 64)]
variants = sys.argv[1].split(',')
shapes = [SHAPES[int(i)] for i in sys.argv[2].split(',')] if len(sys.argv) > 2 else SHAPES[:2]
mods = {}
for v in variants:
    try:
        mods[v] = load(v)
    except Exception as e:
        print(f"{v}: load failed {type(e).__name__}: {str(e)[:300]}")
results = []
for B, H, Hkv, T, D in shapes:
    torch.manual_seed(0)
    q = torch.randn(B, H, T, D, device='cuda', dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(B, Hkv, T, D, device='cuda', dtype=torch.bfloat16, requires_grad=True)
    v_ = torch.randn(B, Hkv, T, D, device='cuda', dtype=torch.bfloat16, requires_grad=True)
    do = torch.randn(B, H, T, D, device='cuda', dtype=torch.bfloat16)
    flops = 4 * B * H * T * T * D * 0.5
    shape = f"{B}x{H}x{Hkv}x{T}x{D}"

    def fns(attend):
        fwd = lambda: attend(q, k, v_)
        def both():
            torch.autograd.grad(attend(q, k, v_), (q, k, v_), do)
        return fwd, both
    impls = {'sdpa': lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True, enable_gqa=H != Hkv)}
    for name, m in mods.items():
        impls[name] = (lambda m: lambda q, k, v: m.flash_attention(q, k, v, causal=True, backend='triton'))(m)
    ref = None
    for name, attend in impls.items():
        t0 = time.time()
        try:
            o = attend(q, k, v_)
            grads = torch.autograd.grad(o, (q, k, v_), do)
            outs = [o.float()] + [g.float() for g in grads]
            if ref is None:
                ref = outs
            err = [((a - r).norm() / r.norm()).item() for a, r in zip(outs, ref)]
            fwd, both = fns(attend)
            (f_us, _), (b_us, parts) = gpu_us(fwd), gpu_us(both)
        except Exception as e:
            print(f"{shape} {name}: FAILED {type(e).__name__}: {str(e)[:400]}", flush=True)
            continue
        row = dict(shape=shape, impl=name, fwd_us=f_us, fwdbwd_us=b_us, bwd_us=b_us - f_us,
                   fwd_tflops=flops / f_us / 1e6, fwdbwd_tflops=3.5 * flops / b_us / 1e6, relerr_vs_sdpa=err,
                   setup_s=time.time() - t0, parts=parts)
        m = mods.get(name)
        if m is not None:
            row['chosen'] = {n: str(getattr(m, n).best_config) for n in dir(m) if n.endswith('_tuned')}
            for n in dir(m):
                if n.endswith('_tuned') and getattr(getattr(m, n), 'configs_timings', None):
                    ts = sorted(getattr(m, n).configs_timings.items(), key=lambda ct: ct[1][0] if isinstance(ct[1], (list, tuple)) else ct[1])
                    print(f"   {n}: " + '; '.join(f"{c.kwargs['BLOCK_M']}x{c.kwargs['BLOCK_N']} w{c.num_warps} s{c.num_stages} r{c.maxnreg} "
                                                    f"{(t[0] if isinstance(t, (list, tuple)) else t) * 1e3:.1f}" for c, t in ts[:6]))
        results.append(row)
        print(f"{shape:18s} {name:12s} fwd {f_us:8.1f} us  fwd+bwd {b_us:8.1f} us  bwd {b_us - f_us:8.1f}  "
              f"({3.5 * flops / b_us / 1e6:.0f} TFLOP/s)  err o/dq/dk/dv {' '.join(f'{e:.1e}' for e in err)}  "
              f"[{time.time() - t0:.0f}s] {row.get('chosen', '')}\n      " + '; '.join(f"{n} {t:.1f}" for n, t in parts.items()), flush=True)
out = os.environ.get('OUT', '/tmp')
with open(f"{out}/exp_{'_'.join(variants)}.json", 'w') as f:
    json.dump(results, f, indent=1)
print("\nsummary (us)")
for r in results:
    sd = next(x for x in results if x['shape'] == r['shape'] and x['impl'] == 'sdpa')
    print(f"{r['shape']:18s} {r['impl']:12s} fwd {r['fwd_us']:7.1f} ({sd['fwd_us'] / r['fwd_us']:.2f}x)  "
          f"fwd+bwd {r['fwdbwd_us']:7.1f} ({sd['fwdbwd_us'] / r['fwdbwd_us']:.2f}x)")
