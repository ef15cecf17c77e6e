# device call 10: the kernels of one compiled forward+backward of GELU and LayerNorm, Triton vs PyTorch
timeout 250 python -u docs/runs/2026-11-24-issue8-s1/compiled_op_kernels.py > $OUT/compiled_op_kernels.txt 2>&1
echo "[rc=$?]" >> $OUT/compiled_op_kernels.txt
