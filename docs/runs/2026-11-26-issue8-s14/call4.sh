# Call 4 (nvidia-h100-x1, carry .devdata): TiedEmbedding (the lookup and the head's weight from one node, the rows
# scattered into the head's gradient, eager and compiled) in place of the sparse gradient and LateGradient. CUDA tests,
# Inductor's code for the compiled step (is the (vocab, C) zero fill and add gone?), then this tree and the one before
# the session (ef8ea5f, .devdata/head) in turn.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 150 python -m pytest -q tests/test_model.py -k "scatter or recompute_activation or cast_per_block or loss_path" > $OUT/tests_model.txt 2>&1
echo "== tests model rc=$?"; grep FAILED $OUT/tests_model.txt; tail -1 $OUT/tests_model.txt
timeout 90 python -m pytest -q tests/test_step_graph.py > $OUT/tests_graph.txt 2>&1
echo "== tests step graph rc=$?"; grep FAILED $OUT/tests_graph.txt; tail -1 $OUT/tests_graph.txt
d=$OUT/prof_kernels_compiled_graphed
TORCH_LOGS=output_code timeout 150 python bench.py --autocast_residual=True --profile --profile_steps=5 \
  --profile_variant="kernels compiled graphed" --bench_dir=$d > $OUT/output_code.txt 2>&1
echo "== profile rc=$?"; rm -f $d/trace.json $d/bench.json; head -1 $d/profile.txt
grep -E "f32\[50304, 768\]" $OUT/output_code.txt | grep -E "full|add\.Tensor|index_put" | sed -E 's/^.*\] //' | cut -c1-200 | sort | uniq -c
grep -E "triton_poi_fused_add|embedding_dense|triton_per_fused_[0-9]|index_put" $d/profile.txt | cut -c1-120
gzip $OUT/output_code.txt
V="kernels eager graphed,kernels compiled graphed"
for run in new old; do
  d=.; [ $run = old ] && d=.devdata/head
  (cd $d && timeout 150 python bench.py --autocast_residual=True --variants="$V" --bench_dir=$OUT/bench_$run > $OUT/bench_$run.txt 2>&1)
  echo "== $run rc=$?"; grep -A3 "^Training step" $OUT/bench_$run.txt | tail -2 | cut -c1-110
done
