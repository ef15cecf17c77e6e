# Twelfth session on issue 8, call 2 (nvidia-h100-x1, carry .devdata): nanoGPT's own bench.py (karpathy/nanoGPT
# 3adf61e: bench.py, model.py, configurator.py copied unmodified into .devdata/nanogpt/) against our bench.py's
# baselines and kernels eager, one machine, ours before and after nanoGPT's.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
python bench.py --autocast_residual=True --variants="baseline eager,kernels eager,baseline compiled" --bench_dir=$OUT/ours1 > $OUT/ours1.txt 2>&1
echo "== ours 1 rc=$?"; grep -A8 "^Training step" $OUT/ours1.txt
cd .devdata/nanogpt
python bench.py --real_data=False --compile=False > $OUT/nanogpt_eager.txt 2>&1; echo "== nanoGPT eager rc=$?"; tail -1 $OUT/nanogpt_eager.txt
python bench.py --real_data=False --compile=True > $OUT/nanogpt_compiled.txt 2>&1; echo "== nanoGPT compiled rc=$?"; tail -1 $OUT/nanogpt_compiled.txt
python bench.py --real_data=False --compile=False > $OUT/nanogpt_eager2.txt 2>&1; echo "== nanoGPT eager again rc=$?"; tail -1 $OUT/nanogpt_eager2.txt
cd ../..
python bench.py --autocast_residual=True --variants="baseline eager,kernels eager" --bench_dir=$OUT/ours2 > $OUT/ours2.txt 2>&1
echo "== ours 2 rc=$?"; grep -A6 "^Training step" $OUT/ours2.txt
