# call 1: the tanh graphed step's profile with Inductor's generated code: what each of Inductor's leftover kernels
# computes (its source nodes), how often each kernel runs a step, and its neighbours in the trace
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
TORCH_LOGS=output_code timeout 200 python bench.py --autocast_residual=True --gelu_approximate=tanh --profile \
  --profile_variant="kernels compiled graphed" --variants="kernels compiled graphed" --bench_dir=/tmp/prof \
  > $OUT/prof.txt 2> $OUT/output_code.log
echo "prof rc $? t=$(( $(date +%s) - t0 ))"
python docs/runs/2026-11-27-issue8-s31/trace_kernels.py /tmp/prof/trace.json 3 > $OUT/trace_kernels.txt 2>&1
head -60 $OUT/trace_kernels.txt
grep -n "Source Nodes\|Original ATen\|^def triton_\|kernel_name" $OUT/output_code.log | grep -v "^.*kernel_name.*async_compile" | head -80
gzip $OUT/output_code.log; ls -la $OUT
