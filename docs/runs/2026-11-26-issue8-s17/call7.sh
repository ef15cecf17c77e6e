# Call 7 (nvidia-h100-x1, carry .devdata): tests/test_choose.py on CUDA after call 6's two failures were mended; the
# six GPT-2 variants with this session's changes (recompute 'none': 'auto' decides on time as before, GELU's new
# backward tile); train.py's DDP graphed-step tests (one rank here), which the sixteenth session did not run.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 90 python -m pytest -q tests/test_choose.py 2>&1 | tail -1
timeout 300 python bench.py --autocast_residual=True --bench_dir=/tmp/n > $OUT/bench_none.txt 2>&1
echo "== gpt2 none rc=$?"; grep -A9 "^Training step" $OUT/bench_none.txt | tail -8 | cut -c1-200
TINY_SHAKESPEARE=$PWD/.devdata/input.txt timeout 200 python -m pytest -q tests/test_train.py -k "ddp_step_replayed" 2>&1 | tail -1
