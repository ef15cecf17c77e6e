# device call 8: are the compiled GPT-2 step's graphs really replayed as CUDA graphs under
# reduce-overhead (Inductor's perf hints name what makes it skip them), and where the step's
# time goes then (profile of 'kernels compiled')
export TORCH_LOGS=perf_hints
timeout 250 python bench.py --variants="kernels compiled" --compile_mode=reduce-overhead --bench_dir=$OUT/ro > $OUT/bench_ro_hints.txt 2>&1
echo "[rc=$?]" >> $OUT/bench_ro_hints.txt
unset TORCH_LOGS
timeout 250 python bench.py --profile --profile_variant="kernels compiled" --compile_mode=reduce-overhead --bench_dir=$OUT/prof > $OUT/profile_ro.txt 2>&1
echo "[rc=$?]" >> $OUT/profile_ro.txt
rm -f $OUT/prof/trace.json
