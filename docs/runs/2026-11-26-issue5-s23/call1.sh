# Call 1 (nvidia-h100-x1): every cuBLASLt algorithm its heuristic offers for the loss's three chunk products and for
# GPT-2's block products (lt_algos.py), with a clock log.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 250 > $OUT/clocks.csv &
timeout 540 python docs/runs/2026-11-26-issue5-s23/lt_algos.py 3 > $OUT/lt_algos.txt 2>&1; echo "lt_algos rc=$?"
kill %1; grep -v Warning $OUT/lt_algos.txt | cut -c1-220 | tail -150
