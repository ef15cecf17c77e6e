# call 5: kernels.adamw's tiles swept around call 4's best (now the default, 1024 x 2, 4 warps); bench's profile of
# the graphed step (erf) with it: AdamW's time in the step; the step against the tree before once more, in turn
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
D=docs/runs/2026-11-27-issue8-s26
timeout 120 python $D/adamw_probe.py 1024x2x4,1024x1x4,2048x1x8,2048x2x8,512x2x4,512x4x4,4096x1x8,2048x1x4 \
  > $OUT/adamw_probe.txt 2>&1; echo "rc $?" >> $OUT/adamw_probe.txt; cat $OUT/adamw_probe.txt
TORCHINDUCTOR_UNIQUE_KERNEL_NAMES=1 timeout 200 python bench.py --autocast_residual=True --profile \
  --profile_variant="kernels compiled graphed" --variants="kernels compiled graphed" --bench_dir=$OUT/prof > $OUT/prof.txt 2>&1
echo "rc $?" >> $OUT/prof.txt; rm -f $OUT/prof/trace.json; grep -A12 "GPU busy" $OUT/prof.txt; grep "adamw\|FusedOpti" $OUT/prof.txt
timeout 150 python bench.py --autocast_residual=True --variants="kernels compiled graphed" --bench_dir=/tmp/new3 > $OUT/bench_new_3.txt 2>&1
echo "new 3 rc $? $(grep -A1 '^ *variant' $OUT/bench_new_3.txt | tail -1)"
(cd .devdata/head && timeout 150 python bench.py --autocast_residual=True --variants="kernels compiled graphed" --bench_dir=/tmp/old3 > $OUT/bench_old_3.txt 2>&1
 echo "old 3 rc $? $(grep -A1 '^ *variant' $OUT/bench_old_3.txt | tail -1)")
