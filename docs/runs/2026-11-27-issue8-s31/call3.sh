# call 3: emb_probe.py (call 2's try failed on its import), then the step with kernels/embedding.py against the tree
# before it (.devdata/head = e966b55) in turn: GELU's tanh form twice (new first, then head first), nanoGPT's erf once;
# bench's own 'auto' choice for the embedding (its kernels line is printed)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
timeout 100 python docs/runs/2026-11-27-issue8-s31/emb_probe.py > $OUT/emb_probe.txt 2>&1
echo "probe rc $?"; cat $OUT/emb_probe.txt; echo "t=$(( $(date +%s) - t0 ))"
n=0
for pair in "tanh new" "tanh head" "tanh head" "tanh new" "none new" "none head"; do
  set -- $pair; g=$1; tree=$2; n=$((n + 1)); dir=.; [ $tree = head ] && dir=.devdata/head
  (cd $dir && timeout 110 python bench.py --autocast_residual=True --gelu_approximate=$g \
    --variants="kernels compiled graphed" --bench_dir=/tmp/b$n) > $OUT/bench_${n}_${g}_${tree}.txt 2>&1
  rc=$?; grep "^  embedding:" $OUT/bench_${n}_${g}_${tree}.txt; echo "$n $g $tree rc $rc $(grep '^kernels: [a-z_]*=' $OUT/bench_${n}_${g}_${tree}.txt | head -1 | cut -c1-40) | $(grep -A1 '^ *variant' $OUT/bench_${n}_${g}_${tree}.txt | tail -1) t=$(( $(date +%s) - t0 ))"
done
