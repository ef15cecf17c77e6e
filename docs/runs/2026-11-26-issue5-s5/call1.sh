# Issue 5, fifth session, call 1 (nvidia-h100-x1, carry .devdata): the chunk size's time-memory trade at GPT-2's
# head, with a clock log (the 700 W cap).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 250 > $OUT/clocks.csv &
timeout 400 python docs/runs/2026-11-26-issue5-s5/chunks.py 3 > $OUT/chunks.txt 2>&1; echo "rc=$?"
kill %1; cat $OUT/chunks.txt | grep -v Warning
