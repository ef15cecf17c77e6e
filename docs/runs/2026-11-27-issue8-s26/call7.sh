# call 7: bench's optimizer table with both AdamWs side by side (kernels.AdamW, torch's fused step) and Muon, on the
# compiled model with every Triton op forced (no 'auto' measuring: the session's device time is nearly spent)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 280 python bench.py --optim --autocast_residual=True --use_triton_layer_norm=True --use_triton_mlp=True \
  --use_triton_attention=True --use_triton_cross_entropy=True --warmup_steps=5 --timed_steps=20 --bench_dir=$OUT/optim \
  > $OUT/optim.txt 2>&1; echo "rc $?" >> $OUT/optim.txt; grep -v "^\s*$" $OUT/optim.txt | tail -9
