# Call 4 (nvidia-h100-x1, carry .devdata): cuBLAS without its workspace as train.py's and bench.py's default
# (model.cublas_without_workspace). The new test, a short Shakespeare-char run of train.py (its config: compiled,
# graphed), and bench.py's six variants.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 60 python -m pytest -q tests/test_model.py -k "cublas" 2>&1 | tail -1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null && \
timeout 150 python train.py config/train_shakespeare_char.py --max_iters=300 --eval_interval=300 --eval_iters=20 \
  --log_interval=100 --out_dir=/tmp/out-sc > /tmp/train.txt 2>&1
echo "== train rc=$?"; grep -E "^iter|^step|cuda_graph|error" /tmp/train.txt | tail -6
timeout 280 python bench.py --autocast_residual=True --bench_dir=$OUT/bench > $OUT/bench.txt 2>&1
echo "== bench rc=$?"; grep -A9 "^Training step" $OUT/bench.txt | cut -c1-230
