# Call 1 (nvidia-h100-x1, carry .devdata): where LLaMA's recompute='activation' step peaks (peak.py), eager and
# compiled, the loss at its default chunk (200 MiB with recompute) and at 100 MiB.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
P=docs/runs/2026-11-26-issue8-s18/peak.py
timeout 200 python $P arch=llama compiled=0 out=$OUT/peak_llama_eager.txt > $OUT/peak_log.txt 2>&1; echo "eager rc=$?"
timeout 200 python $P arch=llama compiled=1 out=$OUT/peak_llama_compiled.txt >> $OUT/peak_log.txt 2>&1; echo "compiled rc=$?"
timeout 200 python $P arch=llama compiled=1 loss_chunk_mib=100 out=$OUT/peak_llama_compiled_100.txt >> $OUT/peak_log.txt 2>&1; echo "compiled 100 rc=$?"
tail -5 $OUT/peak_log.txt
for f in $OUT/peak_llama_*.txt; do echo "== $f"; head -24 $f | cut -c1-220; done
