# Call 7 (nvidia-h100-x1, carry .devdata): alloc_pieces.py, the small pieces every launcher repeats, on this host.
export PYTHONUNBUFFERED=1
timeout 200 python docs/runs/2026-11-26-issue8-s20/alloc_pieces.py > $OUT/alloc_pieces.txt 2>&1; echo rc=$?
cat $OUT/alloc_pieces.txt
