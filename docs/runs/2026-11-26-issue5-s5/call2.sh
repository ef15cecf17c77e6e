# Issue 5, fifth session, call 2 (nvidia-h100-x1, carry .devdata): GPU time per kernel for chunks of 2048, 3072,
# 4096 and 6144 rows: which part gains with bigger chunks (call 1: 3 chunks 5.41 ms against 6 chunks' 5.71).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 300 python docs/runs/2026-11-26-issue5-s5/chunk_profile.py > $OUT/chunk_profile.txt 2>&1; echo "rc=$?"
grep -v Warn $OUT/chunk_profile.txt
