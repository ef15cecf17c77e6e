# call 1: the twenty-sixth session's review changes to kernels.adamw on CUDA for the first time, and this session's
# change (the bias corrections back in the kernel, in fp64; no zeros kernel without found_inf) against the tree before
# (.devdata/head = dadf88f: the corrections by ~9 small torch kernels a group); the graphed step's profile (erf) with
# the names of Inductor's kernels' ATen ops, for the casts' share
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
P=docs/runs/2026-11-27-issue8-s26/adamw_probe.py
for r in 1 2; do
  timeout 90 python $P 1024x1x4 > $OUT/adamw_probe_new_$r.txt 2>&1; echo "rc $?" >> $OUT/adamw_probe_new_$r.txt
  (cd .devdata/head && timeout 90 python $P 1024x1x4 > $OUT/adamw_probe_old_$r.txt 2>&1; echo "rc $?" >> $OUT/adamw_probe_old_$r.txt)
done
tail -n 4 $OUT/adamw_probe_*.txt
timeout 240 python -m pytest -q tests/test_adamw.py tests/test_muon.py tests/test_muon_update.py tests/test_step_graph.py \
  > $OUT/tests.txt 2>&1; echo "tests rc $?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt
timeout 200 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph_trains_and_resumes or falls or resume_continues or muon_trains" \
  > $OUT/tests_train.txt 2>&1; echo "tests rc $?" >> $OUT/tests_train.txt; tail -3 $OUT/tests_train.txt
timeout 150 python -m pytest -q tests/test_model.py -k "bf16_training_step_kernels_on_and_off_agree" \
  > $OUT/tests_model.txt 2>&1; echo "tests rc $?" >> $OUT/tests_model.txt; tail -3 $OUT/tests_model.txt
TORCHINDUCTOR_CACHE_DIR=/tmp/ic TORCHINDUCTOR_UNIQUE_KERNEL_NAMES=1 timeout 200 python bench.py --autocast_residual=True --profile \
  --profile_variant="kernels compiled graphed" --variants="kernels compiled graphed" --bench_dir=$OUT/prof > $OUT/prof.txt 2>&1
echo "rc $?" >> $OUT/prof.txt; rm -f $OUT/prof/trace.json; grep -A12 "GPU busy" $OUT/prof.txt; grep "adamw\|FusedOpti" $OUT/prof.txt
grep -A1 '^ *variant' $OUT/prof.txt | tail -2
find /tmp/ic -name "*.py" | xargs grep -h -B4 "= async_compile.triton('" | grep -v "^# kernel path" > $OUT/kernel_origins.txt
wc -l $OUT/kernel_origins.txt
