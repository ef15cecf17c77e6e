# device call 3 (nvidia-h100-x1): (1) does the bf16 residual stream keep GPT-2's loss curve? GPT-2 124M
# on Tiny Shakespeare in GPT-2 BPE, 600 iterations of 12x1024 as in docs/runs/2026-11-24-issue8-s1/call5,
# kernels='triton', fp32 stream vs bf16 stream, same seed (the two share the GPU; times not comparable).
# (2) call 2's 'kernels compiled' (not graphed) took 36.24 ms with the bf16 stream against ~27 before:
# that variant alone, stream bf16 then fp32, recompiles and graph breaks logged, then a profile.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
bpe() {  # log name, autocast_residual
  timeout 300 python train.py config/train_gpt2.py --dataset=shakespeare --data_root=.devdata \
    --gradient_accumulation_steps=1 --max_iters=600 --lr_decay_iters=600 --warmup_iters=60 --eval_interval=50 \
    --eval_iters=20 --log_interval=10 --always_save_checkpoint=False --kernels=triton --seed=1337 \
    --autocast_residual=$2 --out_dir=/tmp/$1 --kernels_cache=/tmp/kc_$1.json > $OUT/$1.log 2>&1
  echo "rc $?" >> $OUT/$1.log
}
bpe gpt2_bpe_triton_fp32stream False &
bpe gpt2_bpe_triton_bf16stream True &
wait
grep "^step" $OUT/gpt2_bpe_*.log | tail -4
for ar in True False; do
  TORCH_LOGS=recompiles,graph_breaks timeout 100 python bench.py --autocast_residual=$ar --variants="kernels compiled" \
    --bench_dir=$OUT/bench_compiled_ar$ar > $OUT/bench_compiled_ar$ar.txt 2>&1
  echo "[rc=$?]" >> $OUT/bench_compiled_ar$ar.txt
  grep "ms/iter" $OUT/bench_compiled_ar$ar.txt
done
timeout 120 python bench.py --autocast_residual=True --profile --profile_variant="kernels compiled" \
  --bench_dir=$OUT/prof_compiled_arTrue > $OUT/prof_compiled_arTrue.txt 2>&1
echo "[rc=$?]" >> $OUT/prof_compiled_arTrue.txt
tail -5 $OUT/prof_compiled_arTrue.txt
