# call 9: recompute='activation' with GELU's tanh form in the epilogues (LinearOfNorm / LinearOfActivation): CUDA tests;
# bench's GPT-2 'activation' step with tanh, this tree and the tree before (.devdata/head = git archive 4a91e5c)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 170 python -m pytest -q -n 4 tests/test_gelu_mlp.py \
  tests/test_model.py -k "epilogues or bf16_training_step or recompute or compile_model" > $OUT/tests.txt 2>&1; echo "rc $?" >> $OUT/tests.txt
tail -3 $OUT/tests.txt
A="--autocast_residual=True --gelu_approximate=tanh --recompute=activation"
timeout 200 python bench.py $A --bench_dir=$OUT/new --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" > $OUT/bench_new.txt 2>&1; echo "rc $?" >> $OUT/bench_new.txt
(cd .devdata/head && timeout 170 python bench.py $A --bench_dir=$OUT/old --variants="baseline compiled,kernels compiled graphed" > $OUT/bench_old.txt 2>&1; echo "rc $?" >> $OUT/bench_old.txt)
for f in new old; do echo "== $f"; grep -v "^\s*$" $OUT/bench_$f.txt | tail -8; done
