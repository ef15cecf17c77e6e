# Call 5 (nvidia-h100-x1, carry .devdata; eager_in_turn.patch applied): is the check's old protocol steady or biased by order? check_protocols.py
# orders (both orders, and in turn); then bench.py's kernels eager step with each candidate set forced, in turn, twice.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 300 python docs/runs/2026-11-26-issue8-s20/check_protocols.py orders > $OUT/check_orders.txt 2>&1; echo "orders rc=$?"
grep -v "^kernels:\|^number of" $OUT/check_orders.txt | tail -12
for r in 1 2; do
  for set in triton loss; do
    extra="--use_triton_layer_norm=True --use_triton_attention=True"
    [ $set = loss ] && extra="--use_triton_layer_norm=False --use_triton_attention=False"
    timeout 120 python bench.py --autocast_residual=True --bench_dir=/tmp/e$set --variants="kernels eager" \
      --use_triton_mlp=False --use_triton_cross_entropy=True $extra > $OUT/bench_${set}_$r.txt 2>&1
    echo "$set $r rc=$? $(grep '^ kernels eager' $OUT/bench_${set}_$r.txt | cut -c1-60) | $(grep '^kernels eager:' $OUT/bench_${set}_$r.txt)"
  done
done
