# Call 10 (nvidia-h100-x1): split_qkv back to its two-op form (the Triton path's host time), PyTorch's fallback
# splitting nanoGPT's way itself: the packed-qkv tests on CUDA, and the eager baseline still nanoGPT's step.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 150 python -m pytest -q tests/test_attention.py -k "packed_qkv" tests/test_model.py -k "nanogpts or packed_qkv or forward_backward" \
  > $OUT/tests.txt 2>&1; echo "== tests rc=$?"; tail -1 $OUT/tests.txt
timeout 200 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager graphed" --bench_dir=$OUT/bench > $OUT/bench.txt 2>&1
echo "== bench rc=$?"; grep -A4 "^Training step" $OUT/bench.txt | tail -2
