# Call 2 (nvidia-h100-x1): host_pieces.py, the host time of one call of our ops, piece by piece.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 300 python docs/runs/2026-11-26-issue8-s20/host_pieces.py > $OUT/host_pieces.txt 2>&1; echo rc=$?
cat $OUT/host_pieces.txt | tail -40
