# call 5: why the chooser's CUDA-graph timing of the embedding failed (capture_probe.py), then the step with
# kernels/embedding.py forced on (--use_triton_embedding=True; the chooser measures the rest) against the tree
# before it (.devdata/head = e966b55) in turn, GELU's tanh form, twice
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
timeout 90 python docs/runs/2026-11-27-issue8-s31/capture_probe.py > $OUT/capture_probe.txt 2>&1
echo "probe rc $?"; cut -c1-300 $OUT/capture_probe.txt | tail -40; echo "t=$(( $(date +%s) - t0 ))"
n=0
for tree in new head head new; do
  n=$((n + 1)); dir=.; force=--use_triton_embedding=True; [ $tree = head ] && dir=.devdata/head && force=
  (cd $dir && timeout 100 python bench.py --autocast_residual=True --gelu_approximate=tanh $force \
    --variants="kernels compiled graphed" --bench_dir=/tmp/b$n) > $OUT/bench_${n}_${tree}.txt 2>&1
  rc=$?; echo "$n $tree rc $rc $(grep '^kernels: [a-z_]*=' $OUT/bench_${n}_${tree}.txt | head -1 | cut -c1-40) | $(grep -A1 '^ *variant' $OUT/bench_${n}_${tree}.txt | tail -1 | cut -c1-90) t=$(( $(date +%s) - t0 ))"
done
