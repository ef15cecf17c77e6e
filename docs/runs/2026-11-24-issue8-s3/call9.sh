# device call 9 (H100): recompute through selective checkpointing's per-op policy (recompute
# everything), so that the tag reaches the Triton kernels' nodes under torch.compile (call 8: with
# plain checkpointing it did not)
# 1. recompute_tags.py: the tags on the triton_kernel_wrapper_functional nodes now
# 2. recompute_peaks.py: what the compiled forward keeps ('block': 3,235 MiB in call 7, eager 832)
# 3. recompute_compiled_dropout.py with fallback_random: dropout's masks still replayed
# 4. tests/test_model.py -k recompute on CUDA
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 100 python docs/runs/2026-11-24-issue8-s3/recompute_tags.py > $OUT/recompute_tags.txt 2>&1; echo "[rc=$?]" >> $OUT/recompute_tags.txt
timeout 300 python docs/runs/2026-11-24-issue8-s3/recompute_peaks.py > $OUT/recompute_peaks.txt 2>&1; echo "[rc=$?]" >> $OUT/recompute_peaks.txt
timeout 100 python docs/runs/2026-11-24-issue8-s3/recompute_compiled_dropout.py fallback_random > $OUT/compiled_dropout.txt 2>&1
echo "[rc=$?]" >> $OUT/compiled_dropout.txt
timeout 100 python -m pytest -q tests/test_model.py -k recompute > $OUT/tests.txt 2>&1; echo "[rc=$?]" >> $OUT/tests.txt
for f in recompute_tags recompute_peaks compiled_dropout tests; do grep -v "^kernels\|^number\|Warning\|call_func_at_runtime" $OUT/$f.txt | tail -8; done
