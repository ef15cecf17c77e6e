# Call 8 (nvidia-h100-x1, carry .devdata): the review's fixes on CUDA: the model's and choose's tests, train.py's
# graphed-step test (train.py now sets the workspace as soon as the device is known), and bench.py's header and
# bench.json with the setting (a bias=True run too: no cuBLASLt warning now).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=.devdata/input.txt
timeout 120 python -m pytest -q tests/test_model.py -k "cublas or kernel_choice" tests/test_choose.py 2>&1 | tail -1
timeout 240 python -m pytest -q -x tests/test_train.py -k "replayed_from_one_cuda_graph" 2>&1 | tail -1
timeout 120 python bench.py --autocast_residual=True --bias=True --variants="kernels compiled graphed" --bench_dir=/tmp/b > /tmp/b.txt 2>&1
echo "== bench bias rc=$?"; grep -iE "^device|warn|CUBLAS" /tmp/b.txt | cut -c1-200; grep -A2 "^Training step" /tmp/b.txt | tail -1 | cut -c1-75
python -c "import json; print(json.load(open('/tmp/b/bench.json'))['cublas_workspace_config'])"
