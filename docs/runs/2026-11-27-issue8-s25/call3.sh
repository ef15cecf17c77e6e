# call 3: the erf MLP as one op (kernels.gelu_mlp, products by measured plans): CUDA tests; bench's GPT-2 step with
# nanoGPT's erf form, this tree and the tree before the change (.devdata/head, git archive of 5fd... HEAD) on one machine
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 170 python -m pytest -q -n 4 tests/test_gelu_mlp.py tests/test_choose.py \
  tests/test_model.py -k "one_op or bf16_training_step or recompute_gives or compile_model" > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
tail -3 $OUT/tests.txt
V="baseline compiled,kernels compiled graphed"
timeout 200 python bench.py --autocast_residual=True --bench_dir=$OUT/new --variants="$V,kernels eager graphed" > $OUT/bench_new.txt 2>&1; echo "rc $?" >> $OUT/bench_new.txt
(cd .devdata/head && timeout 170 python bench.py --autocast_residual=True --bench_dir=$OUT/old --variants="$V" > $OUT/bench_old.txt 2>&1; echo "rc $?" >> $OUT/bench_old.txt)
for f in new old; do echo "== $f"; grep -E "gelu:|ms/iter|variant|baseline compiled  |graphed  |rc " $OUT/bench_$f.txt | tail -12; done
