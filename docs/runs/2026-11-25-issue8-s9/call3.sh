# Ninth session, call 3 (nvidia-h100-x1, carry .devdata): the probe of call 2's CUDA test failures
# (probe_activation.py), then GPT-2 (on the H100 this time) and LLaMA, recompute='none' and 'activation' in turn.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 120 python docs/runs/2026-11-25-issue8-s9/probe_activation.py > $OUT/probe.txt 2>&1; grep -v "^kernels\|^number" $OUT/probe.txt | tail -12
V="baseline compiled,kernels compiled,kernels eager graphed,kernels compiled graphed"
for arch in gpt2 llama; do
  args=$([ $arch = llama ] && echo "--arch=llama --n_kv_head=4")
  for r in none activation; do
    timeout 150 python bench.py $args --autocast_residual=True --recompute=$r --variants="$V" --bench_dir=$OUT/bench_${arch}_$r > $OUT/${arch}_$r.txt 2>&1
    echo "== $arch $r"; grep -E "^ *(baseline|kernels) (eager|compiled)" $OUT/${arch}_$r.txt | cut -c1-150
  done
done
