# Call 11 (nvidia-h100-x1, carry .devdata): the end-to-end table with nanoGPT's own model beside the baselines
# (bench.py --nanogpt; karpathy/nanoGPT 3adf61e's model.py in the git-ignored .devdata/nanogpt/).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 560 python bench.py --autocast_residual=True --nanogpt=.devdata/nanogpt/model.py --bench_dir=$OUT/bench > $OUT/bench.txt 2>&1
echo "== bench rc=$?"; grep -A12 "^Training step" $OUT/bench.txt
