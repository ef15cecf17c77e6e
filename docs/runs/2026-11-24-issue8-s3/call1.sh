# device call 1 (H100): the whole-step CUDA graph under DDP.
# 1. the CUDA tests of step_graph.py and of train.py's graphed runs (DDP ones at one rank: one GPU here)
# 2. GPT-2 124M under torchrun at one rank (NCCL all-reduces), compiled, Triton kernels, 8 micro-steps
#    per step on BPE Shakespeare: plain DDP vs the DDP step graphed; median ms per iteration over
#    iterations 12-30 (after the graph's 11 warm-up steps)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=.devdata/input.txt
nvidia-smi -L > $OUT/device.txt
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
timeout 280 python -m pytest -q -x tests/test_step_graph.py tests/test_train.py -k "graph" > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt
gpt2() {  # name, extra args
  timeout 150 python -m torch.distributed.run --standalone --nproc_per_node=1 train.py config/train_gpt2.py \
    --data_root=.devdata --dataset=shakespeare --kernels=triton --gradient_accumulation_steps=8 --max_iters=30 \
    --eval_interval=1000 --eval_iters=2 --log_interval=1 --out_dir=/tmp/out_$1 "${@:2}" > $OUT/gpt2_$1.log 2>&1
  echo "[rc=$?]" >> $OUT/gpt2_$1.log
}
gpt2 ddp_plain
gpt2 ddp_graphed --cuda_graph=True
python - <<'PY' > $OUT/summary.txt
import re, statistics, os
for name in ('ddp_plain', 'ddp_graphed'):
    text = open(os.path.join(os.environ['OUT'], f'gpt2_{name}.log')).read()
    it = {int(i): (float(l), float(t)) for i, l, t in re.findall(r"^iter (\d+): loss ([\d.]+), time ([\d.]+)ms", text, re.M)}
    late = [it[i][1] for i in it if i >= 12]
    print(name, 'median ms/iter (12-30):', statistics.median(late) if late else None,
          'loss@30:', it.get(30, (None,))[0], 'losses:', [round(it[i][0], 4) for i in sorted(it)][:31])
PY
cat $OUT/summary.txt; tail -3 $OUT/tests.txt
