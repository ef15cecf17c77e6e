# call 1: cuBLASLt's GELU epilogues at GPT-2's MLP shapes; matmul's CUDA tests after the epilogue change
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
python docs/runs/2026-11-26-issue8-s24/epilogue_probe.py > $OUT/probe.txt 2>&1; echo "probe rc $?" >> $OUT/probe.txt
python -m pytest -q -n 4 tests/test_matmul.py > $OUT/test_matmul.txt 2>&1; echo "rc $?" >> $OUT/test_matmul.txt
tail -3 $OUT/test_matmul.txt; cat $OUT/probe.txt
