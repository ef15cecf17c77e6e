# Call 5 (nvidia-h100-x1, carry .devdata): the rule's cost side, GPT-2 (its compiled step takes the Triton GELU, so
# call 3 saw no hoisting there): 'mlp' and 'block', kernels compiled graphed, this tree against the one before it
# (.devdata/head), in turn. Prediction: 'mlp' +0.2-0.4 ms (the combo gain, tenth session) at the same peak; 'block'
# unknown (its compiled backward redoes the whole forward at once, model.recomputed's docstring).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
for r in mlp block; do
  B="--autocast_residual=True --recompute=$r --bench_dir=/tmp/b"
  V="kernels compiled graphed"; [ $r = mlp ] && V="baseline compiled,kernels compiled graphed"
  timeout 200 python bench.py $B --variants="$V" > $OUT/bench_${r}_new.txt 2>&1; echo "$r new rc=$?"
  (cd .devdata/head && timeout 120 python bench.py $B --variants="kernels compiled graphed" > $OUT/bench_${r}_old.txt 2>&1; echo "$r old rc=$?")
  for f in new old; do grep -A4 "variant  ms/iter" $OUT/bench_${r}_$f.txt | grep "compiled" | cut -c1-150; done
done
