# Call 3 (nvidia-h100-x1): host_shares.py, the launches' and the eager wrapper's share of the chosen step's host time.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 400 python docs/runs/2026-11-26-issue8-s20/host_shares.py > $OUT/host_shares.txt 2>&1; echo rc=$?
grep -v "^kernels:\|^number of\|^AdamW" $OUT/host_shares.txt | tail -30
