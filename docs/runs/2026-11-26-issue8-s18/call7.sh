# Call 7 (nvidia-h100-x1, carry .devdata): after the review. The combo test on CUDA (call 6: its Triton cases built a CPU
# model where CUDA is present and failed; now on the test's device). LLaMA 'block' compiled graphed with combo kernels off
# (this tree: PyTorch's SwiGLU) against on (.devdata/head, the tree before the session), not measured before: prediction
# -300 MiB or more if the recomputed blocks' SwiGLUs were combined as with 'mlp', else the same peak and +0-0.2 ms. Then
# LLaMA 'mlp''s three variants in one run (call 2's compiled baseline, 30.44 ms, looked slow against call 4's 28.27).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 120 python -m pytest -q tests/test_model.py -k combines_kernels 2>&1 | tail -1
B="--arch=llama --n_kv_head=4 --autocast_residual=True --bench_dir=/tmp/b"
timeout 130 python bench.py $B --recompute=block --variants="kernels compiled graphed" > $OUT/bench_block_new.txt 2>&1; echo "block new rc=$?"
(cd .devdata/head && timeout 130 python bench.py $B --recompute=block --variants="kernels compiled graphed" > $OUT/bench_block_old.txt 2>&1; echo "block old rc=$?")
timeout 200 python bench.py $B --recompute=mlp --variants="baseline compiled,kernels eager graphed,kernels compiled graphed" > $OUT/bench_mlp.txt 2>&1; echo "mlp rc=$?"
for f in block_new block_old mlp; do grep -A4 "variant  ms/iter" $OUT/bench_$f.txt | grep "graphed \|compiled " | cut -c1-190; done
