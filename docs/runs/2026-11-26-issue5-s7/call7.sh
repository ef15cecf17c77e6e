# Call 7 (nvidia-h100-x1, carry .devdata): CUDA tests of the review's changes; the eager pairs again on another machine
# (call 6's host chose a slower eager set for both models), GPT-2 twice, LLaMA once.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 150 python -m pytest -q tests/test_attention.py -k "packed_qkv" tests/test_model.py -k "nanogpts or packed_qkv or forward_backward" \
  > $OUT/tests.txt 2>&1; echo "== tests rc=$?"; tail -1 $OUT/tests.txt
for i in 1 2; do
  timeout 120 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" --bench_dir=$OUT/gpt2_eager$i > $OUT/gpt2_eager$i.txt 2>&1
  echo "== gpt2 eager pair $i rc=$?"; grep "the eager step" $OUT/gpt2_eager$i.txt; grep -A3 "^Training step" $OUT/gpt2_eager$i.txt | tail -2
done
timeout 150 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --variants="baseline eager,kernels eager" --bench_dir=$OUT/llama_eager > $OUT/llama_eager.txt 2>&1
echo "== llama eager pair rc=$?"; grep "the eager step" $OUT/llama_eager.txt; grep -A3 "^Training step" $OUT/llama_eager.txt | tail -2
