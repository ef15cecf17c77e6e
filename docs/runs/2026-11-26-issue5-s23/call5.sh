# Call 5 (nvidia-h100-x1, carry .devdata): after the review's changes (PyTorch's call measured beside cuBLASLt's
# algorithms; split-K sums in fp32 only; typed ctypes calls; current-device and deterministic-mode checks; fewer plans;
# fp32's precise exp in the interpreter too): the CUDA tests of matmul, the loss, the model and step graphs; issue 5's
# bench row once more; the offered algorithms under the plan's preferences against the defaults.
export PYTHONUNBUFFERED=1
timeout 100 python -m pytest -q -n 4 tests/test_matmul.py tests/test_linear_cross_entropy.py > $OUT/tests.txt 2>&1; echo "tests rc=$?"; tail -2 $OUT/tests.txt
timeout 60 python docs/runs/2026-11-26-issue5-s23/alignment.py > $OUT/alignment.txt 2>&1; echo "alignment rc=$?"; cut -c1-200 $OUT/alignment.txt
timeout 150 python bench.py --kernels --kernel_ops=cross_entropy --bench_dir=/tmp/b > $OUT/bench_ce.txt 2>&1; echo "bench rc=$?"
grep -E "^\[|fwdbwd" $OUT/bench_ce.txt | head -4 | cut -c1-220
timeout 200 python -m pytest -q -n 6 tests/test_model.py tests/test_step_graph.py > $OUT/tests_model.txt 2>&1; echo "model tests rc=$?"; tail -2 $OUT/tests_model.txt
