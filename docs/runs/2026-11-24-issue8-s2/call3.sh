# device call 3: the norms' out_dtype on CUDA (tests), then bench.py's default table for GPT-2 and
# the LLaMA-style model, and a profile of the kernels' compiled, graphed step
export PYTHONUNBUFFERED=1 TINY_SHAKESPEARE=.devdata/input.txt
KERNELS_AUTOTUNE=0 timeout 200 python -m pytest -q -x tests/test_norm.py tests/test_model.py tests/test_choose.py \
  tests/test_compile_writes.py > $OUT/tests_cuda.txt 2>&1
echo "[rc=$?]" >> $OUT/tests_cuda.txt
timeout 200 python bench.py --bench_dir=$OUT/gpt2 > $OUT/bench_gpt2.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_gpt2.txt
timeout 200 python bench.py --bench_dir=$OUT/llama --arch=llama --n_kv_head=4 > $OUT/bench_llama.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_llama.txt
timeout 100 python bench.py --bench_dir=$OUT/prof --profile --profile_variant="kernels compiled graphed" > $OUT/profile.txt 2>&1
echo "[rc=$?]" >> $OUT/profile.txt
