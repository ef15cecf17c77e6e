# Compile attention kernels for sm_90 on this CPU machine: registers, spills, HGMMA count.
# usage: python .devdata/exp/sm90.py module_path kernel_name BM BN warps stages [HEAD_DIM]
import importlib.util, subprocess, sys, os, re, tempfile
sys.path.insert(0, os.getcwd())
import triton
from triton.backends.compiler import GPUTarget

path, name, BM, BN, W, S = sys.argv[1:7]
D = int(sys.argv[7]) if len(sys.argv) > 7 else 64
spec = importlib.util.spec_from_file_location('m', path)
m = importlib.util.module_from_spec(spec)
spec.loader.exec_module(m)
fn = getattr(m, name)
while not isinstance(fn, triton.runtime.jit.JITFunction):
    fn = fn.fn
sig, constexprs = {}, {}
for a in fn.arg_names:
    if a in ('HEAD_DIM',):
        constexprs[a] = D
    elif a == 'GROUP' and os.environ.get('GROUP'):
        constexprs[a] = int(os.environ['GROUP'])
    elif a == 'CAUSAL':
        constexprs[a] = os.environ.get('CAUSAL', '1') == '1'
    elif a == 'BLOCK_M':
        constexprs[a] = int(BM)
    elif a == 'BLOCK_N':
        constexprs[a] = int(BN)
    elif a in ('LSE', 'DELTA', 'DQ_ACC'):
        sig[a] = '*fp32'
    elif a in ('Q', 'K', 'V', 'O', 'DO', 'DQ', 'DK', 'DV'):
        sig[a] = '*bf16'
    elif a == 'scale':
        sig[a] = 'fp32'
    else:
        sig[a] = 'i32'
for k in constexprs:
    sig[k] = 'constexpr'
# as at run time: pointers and strides (multiples of 16) specialized as 16-divisible; B, T not (do_not_specialize)
div16 = {(fn.arg_names.index(a),): [['tt.divisibility', 16]] for a, t in sig.items()
         if t.startswith('*') or a.startswith('stride')}
src = triton.compiler.ASTSource(fn=fn, signature=sig, constexprs={(fn.arg_names.index(k),): v for k, v in constexprs.items()}, attrs=div16)
ck = triton.compile(src, target=GPUTarget('cuda', 90, 32), options=dict(num_warps=int(W), num_stages=int(S)))
bindir = os.path.join(os.path.dirname(triton.__file__), 'backends/nvidia/bin')
with tempfile.TemporaryDirectory() as d:
    open(f'{d}/k.ptx', 'w').write(ck.asm['ptx'])
    out = subprocess.run([f'{bindir}/ptxas', '-arch=sm_90a', '-v', f'{d}/k.ptx', '-o', f'{d}/k.cubin'],
                         capture_output=True, text=True).stderr
    sass = subprocess.run([f'{bindir}/cuobjdump', '-sass', f'{d}/k.cubin'], capture_output=True, text=True).stdout
print("\n".join(l for l in out.splitlines() if "erformance" in l or "serializ" in l))
regs = re.findall(r'Used (\d+) registers', out)
spill = re.findall(r'(\d+) bytes spill stores, (\d+) bytes spill loads', out)
print(f"{name} BM={BM} BN={BN} w={W} s={S} D={D}: regs {regs} spills(st,ld) {spill} smem {ck.metadata.shared} "
      f"HGMMA {sass.count('HGMMA')} HMMA {len(re.findall(' HMMA', sass))} RED {len(re.findall(' RED', sass))} "
      f"UBLKRED/UTMAREDG {sass.count('UTMAREDG') + sass.count('UBLKRED')} WARPGROUP.ARRIVE {sass.count('WARPGROUP.ARRIVE')} "
      f"WARPSYNC/BAR {sass.count('BAR.SYNC')} STL {sass.count(' STL')} LDL {sass.count(' LDL')}")
if os.environ.get('SASS'):
    open(os.environ['SASS'], 'w').write(sass)
