# Call 3 (nvidia-h100-x1, carry .devdata): what the compiled step's small Triton kernels are. Inductor's generated code
# (TORCH_LOGS=output_code) and the per-kernel profile of kernels compiled graphed, from one process, so the kernel
# names in profile.txt are those of output_code.txt.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
d=$OUT/prof_kernels_compiled_graphed
TORCH_LOGS=output_code timeout 300 python bench.py --autocast_residual=True --profile --profile_steps=5 \
  --profile_variant="kernels compiled graphed" --bench_dir=$d > $OUT/output_code.txt 2>&1
echo "== profile rc=$?"; rm -f $d/trace.json $d/bench.json; head -45 $d/profile.txt | cut -c1-150
gzip $OUT/output_code.txt; ls -la $OUT
