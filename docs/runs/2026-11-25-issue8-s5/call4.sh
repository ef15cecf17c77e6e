# device call 4 (nvidia-h100-x1): the LLaMA-style variant (RMSNorm, rotary, SwiGLU, GQA 12/4) with the
# residual stream in bf16, without and with recompute='mlp' (GPT-2's: docs/runs/2026-11-25-issue8-s5/call2)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
for rc in none mlp; do
  timeout 200 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --recompute=$rc \
    --variants="baseline compiled,kernels compiled graphed" --bench_dir=$OUT/bench_llama_ar_$rc > $OUT/bench_llama_ar_$rc.txt 2>&1
  echo "[rc=$?]" >> $OUT/bench_llama_ar_$rc.txt
  tail -8 $OUT/bench_llama_ar_$rc.txt
done
