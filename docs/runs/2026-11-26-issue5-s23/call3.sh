# Call 3 (nvidia-h100-x1, carry .devdata): the loss's memory test with the split-K workspace in its bound, the matmul and
# loss tests, the model and step-graph tests (the loss inside torch.compile and CUDA graphs); issue 5's bench row twice more.
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,clocks_throttle_reasons.active --format=csv -lms 250 > $OUT/clocks.csv &
timeout 100 python -m pytest -q -n 4 tests/test_matmul.py tests/test_linear_cross_entropy.py > $OUT/tests.txt 2>&1; echo "tests rc=$?"; tail -2 $OUT/tests.txt
timeout 200 python -m pytest -q -n 4 --dist loadfile tests/test_model.py tests/test_step_graph.py > $OUT/tests_model.txt 2>&1; echo "model tests rc=$?"; tail -4 $OUT/tests_model.txt
for i in 2 3; do
  timeout 150 python bench.py --kernels --kernel_ops=cross_entropy --bench_dir=/tmp/b$i > $OUT/bench_ce$i.txt 2>&1; echo "bench $i rc=$?"
  grep -A3 "12288x768 V=50304" $OUT/bench_ce$i.txt | cut -c1-220
done
kill %1
