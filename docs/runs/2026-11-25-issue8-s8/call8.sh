# Call 8 (nvidia-h100-x1, carry .devdata): the final code's CUDA tests (the model's, with the cast test now
# resetting Dynamo before each compile, and the step graph's), then one more GPT-2 eager pair.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 120 python -m pytest tests/test_model.py tests/test_step_graph.py -q > $OUT/tests.txt 2>&1; echo "[rc=$?]" >> $OUT/tests.txt
tail -2 $OUT/tests.txt
timeout 80 python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" --bench_dir=$OUT/bench_eager \
  > $OUT/eager.txt 2>&1
echo "after: $(grep -E '^ *(baseline|kernels) eager +[0-9]' $OUT/eager.txt | cut -c1-110 | tr '\n' '|')"
