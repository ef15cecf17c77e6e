# call 10: call 9 again with the Triton GELU forced (--use_triton_mlp=True): in call 9 'auto' took PyTorch's GELU
# under 'activation' in both trees, so neither ran the epilogues; this tree against the tree before, one machine
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
A="--autocast_residual=True --gelu_approximate=tanh --recompute=activation --use_triton_mlp=True"
timeout 200 python bench.py $A --bench_dir=$OUT/new --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" > $OUT/bench_new.txt 2>&1; echo "rc $?" >> $OUT/bench_new.txt
(cd .devdata/head && timeout 170 python bench.py $A --bench_dir=$OUT/old --variants="kernels compiled graphed,kernels eager graphed" > $OUT/bench_old.txt 2>&1; echo "rc $?" >> $OUT/bench_old.txt)
for f in new old; do echo "== $f"; grep -v "^\s*$" $OUT/bench_$f.txt | tail -7; done
