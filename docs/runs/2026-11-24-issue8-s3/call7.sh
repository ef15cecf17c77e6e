# device call 7 (H100): where compiled recompute loses its savings (recompute_peaks.py)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 400 python docs/runs/2026-11-24-issue8-s3/recompute_peaks.py > $OUT/recompute_peaks.txt 2>&1
echo "[rc=$?]" >> $OUT/recompute_peaks.txt
grep -v "^kernels\|^number" $OUT/recompute_peaks.txt | tail -8
