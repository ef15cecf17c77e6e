# Call 4 (nvidia-h100-x1, carry .devdata): call 3's compiled kernels variants lost 0.038 in the loss with
# cast_per_block; compiled_casts.py compares the gradients eager / aot_eager / inductor, small GPT.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 400 python docs/runs/2026-11-25-issue8-s8/compiled_casts.py > $OUT/compiled_casts.txt 2>&1
echo "[rc=$?]" >> $OUT/compiled_casts.txt; grep -v "^kernels:\|^number" $OUT/compiled_casts.txt | tail -30
