# For the next session's first device call (nvidia-h100-x1, carry .devdata): not run this session.
# LLaMA's eager pair with this code (last run 2026-11-24), then the GPT-2 eager pair three times in a
# row, to see the host-bound step's spread within one call before judging any further host trim.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --variants="baseline eager,kernels eager" \
  --bench_dir=$OUT/bench_llama_eager > $OUT/bench_llama_eager.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_llama_eager.txt; grep -E "^ *(baseline|kernels) eager +[0-9]|eager step|rc=" $OUT/bench_llama_eager.txt | cut -c1-200
for i in 1 2 3; do
  timeout 150 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" > $OUT/bench_eager_$i.txt 2>&1
  echo "run $i: $(grep -E '^ *(baseline|kernels) eager +[0-9]' $OUT/bench_eager_$i.txt | cut -c1-120 | tr '\n' '|')"
done
