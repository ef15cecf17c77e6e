# Call 1 (nvidia-h100-x1, carry .devdata): where the graphed steps' GPU sits idle between kernels (gaps.py on bench's
# trace), what programmatic dependent launch saves per boundary (pdl_probe.py), Inductor's own PDL switch on the
# compiled graphed step (off, then on), and why tests/sm90_ptxas.py exits 1 on this image.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
R=docs/runs/2026-11-26-issue8-s15
python -c "import torch, torch._inductor.config as c; print(torch.__version__, 'inductor enable_pdl:', getattr(c.triton, 'enable_pdl', 'absent'))"
timeout 120 python $R/pdl_probe.py; echo "== probe rc=$?"
timeout 60 python - <<'PY'
import subprocess, sys
import kernels.attention as FA
config = FA.CONFIGS['fwd'][64][0]
r = subprocess.run([sys.executable, 'tests/sm90_ptxas.py', '_flash_attention_fwd_kernel', *map(str, config), '--head-dim', '64'],
                   capture_output=True, text=True)
print('sm90_ptxas rc', r.returncode); print(r.stdout[-1500:]); print(r.stderr[-2500:])
PY
for v in "kernels compiled graphed" "kernels eager graphed"; do
  d=/tmp/prof_${v// /_}
  timeout 150 python bench.py --autocast_residual=True --profile --profile_steps=5 --profile_variant="$v" --bench_dir=$d > $d.txt 2>&1
  echo "== profile $v rc=$?"; head -1 $d/profile.txt; python $R/gaps.py $d/trace.json 5
done
for pdl in 0 1; do
  TORCHINDUCTOR_ENABLE_PDL=$pdl timeout 120 python bench.py --autocast_residual=True --variants="kernels compiled graphed" \
    --bench_dir=/tmp/cg_pdl$pdl > $OUT/cg_pdl$pdl.txt 2>&1
  echo "== inductor pdl=$pdl rc=$?"; grep -A2 "^Training step" $OUT/cg_pdl$pdl.txt | tail -1 | cut -c1-100
done
