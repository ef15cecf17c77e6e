# call 13: what Inductor's small kernels in the compiled graphed step are (~0.75 ms a step: triton_poi_fused_N,
# triton_per_fused_N): bench's kernels compiled graphed variant with Inductor's output code logged, then each of those
# kernels' source nodes (the ops it fuses) as Inductor's comments name them
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
TORCH_LOGS=output_code timeout 250 python bench.py --autocast_residual=True --gelu_approximate=tanh \
  --variants="kernels compiled graphed" --bench_dir=$OUT/b > $OUT/bench.txt 2> $OUT/output_code.txt; echo "rc $?" >> $OUT/bench.txt
tail -3 $OUT/bench.txt
python - "$OUT/output_code.txt" > $OUT/kernels.txt <<'PY'
import re, sys
text = open(sys.argv[1], errors="replace").read()
# each generated kernel: "# kernel path: ..." then its source nodes comment, then "triton_xxx_fused_N = async_compile.triton('name', '''"
for m in re.finditer(r"# Topologically Sorted Source Nodes: \[([^\]]*)\].*?\n(?:#[^\n]*\n)*?(triton_\w+) = async_compile\.triton\('(\w+)'", text, re.S):
    print(f"{m.group(3)}: {m.group(1)[:400]}")
PY
wc -l $OUT/kernels.txt; grep -E "^triton_(poi|per)_fused_(10|4|1|2|3|9|0|sum_6|__to_copy_8|5|__to_copy_7):" $OUT/kernels.txt | head -40
gzip -f $OUT/output_code.txt
