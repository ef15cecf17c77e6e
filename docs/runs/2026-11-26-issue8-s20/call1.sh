# Call 1 (nvidia-h100-x1): host_ablation.py, where the eager step's host time goes.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 400 python docs/runs/2026-11-26-issue8-s20/host_ablation.py > $OUT/host_ablation.txt 2>&1; echo rc=$?
grep -v "^kernels:\|^number of\|^AdamW" $OUT/host_ablation.txt | head -150
