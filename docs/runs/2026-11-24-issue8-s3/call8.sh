# device call 8 (H100): recompute_tags.py: the checkpoint's tags on the Triton kernels' nodes
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python docs/runs/2026-11-24-issue8-s3/recompute_tags.py > $OUT/recompute_tags.txt 2>&1
echo "[rc=$?]" >> $OUT/recompute_tags.txt
grep -v "^kernels\|^number" $OUT/recompute_tags.txt | tail -25
