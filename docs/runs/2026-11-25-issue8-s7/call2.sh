# Call 2 (nvidia-h100-x1, carry .devdata): host us per piece of the eager LayerNorm and attention
# paths, with the code as it was at 3afaf68 (before this session's trims; pieces.py has since been
# updated to the new norm_fwd/norm_bwd signatures).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 300 python docs/runs/2026-11-25-issue8-s7/pieces.py > $OUT/pieces.txt 2>&1; echo "[rc=$?]" >> $OUT/pieces.txt
