# call 4: the embedding as kernels.tied_embedding, also in kernels/choose.py's case (call 3's case timed the untied op,
# with a dense gradient of its own, and 'auto' took PyTorch's): the CUDA tests that run it, then the step against the
# tree before it (.devdata/head = e966b55) in turn, bench's own 'auto' choice: GELU's tanh form twice, erf once
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
timeout 150 python -m pytest -q tests/test_embedding.py tests/test_choose.py tests/test_compile_writes.py tests/test_model.py \
  -k "test_embedding or test_compile_writes or (test_choose and real_measurement) or scatter_embedding or compile_model_gives" \
  > $OUT/tests.txt 2>&1
echo "tests rc $? $(tail -1 $OUT/tests.txt) t=$(( $(date +%s) - t0 ))"
n=0
for pair in "tanh new" "tanh head" "tanh head" "tanh new" "none new" "none head"; do
  set -- $pair; g=$1; tree=$2; n=$((n + 1)); dir=.; [ $tree = head ] && dir=.devdata/head
  (cd $dir && timeout 110 python bench.py --autocast_residual=True --gelu_approximate=$g \
    --variants="kernels compiled graphed" --bench_dir=/tmp/b$n) > $OUT/bench_${n}_${g}_${tree}.txt 2>&1
  rc=$?; grep "^  embedding:" $OUT/bench_${n}_${g}_${tree}.txt; echo "$n $g $tree rc $rc $(grep '^kernels: [a-z_]*=' $OUT/bench_${n}_${g}_${tree}.txt | head -1 | cut -c1-40) | $(grep -A1 '^ *variant' $OUT/bench_${n}_${g}_${tree}.txt | tail -1 | cut -c1-90) t=$(( $(date +%s) - t0 ))"
done
