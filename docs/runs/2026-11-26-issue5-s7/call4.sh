# Call 4 (nvidia-h100-x1, carry .devdata): after the fix (the model's PyTorch path as nanoGPT's): CUDA tests of what
# changed, the six variants, and nanoGPT's own eager and compiled bench on the same machine.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python -m pytest -q -x tests/test_model.py tests/test_choose.py tests/test_linear_cross_entropy.py -k "not memory" > $OUT/tests.txt 2>&1
echo "== tests rc=$?"; tail -2 $OUT/tests.txt
timeout 330 python bench.py --autocast_residual=True --bench_dir=$OUT/bench > $OUT/bench.txt 2>&1
echo "== bench rc=$?"; grep -A10 "^Training step" $OUT/bench.txt
cd .devdata/nanogpt
timeout 40 python bench.py --real_data=False --compile=False > $OUT/nanogpt_eager.txt 2>&1; echo "== nanoGPT eager rc=$?"; tail -1 $OUT/nanogpt_eager.txt
timeout 100 python bench.py --real_data=False --compile=True > $OUT/nanogpt_compiled.txt 2>&1; echo "== nanoGPT compiled rc=$?"; tail -1 $OUT/nanogpt_compiled.txt
