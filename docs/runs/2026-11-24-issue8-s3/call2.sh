# device call 2 (H100): what call 1 left: the train.py-level DDP graph tests (call 1's test run
# timed out before them), and the same GPT-2 run as call 1 without torchrun (no DDP), plain and
# graphed, to tell DDP's own cost per step from the graph's gain
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=.devdata/input.txt
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
timeout 330 python -m pytest -q -x tests/test_train.py -k "ddp_step_replayed" > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt
gpt2() {  # name, extra args
  timeout 120 python train.py config/train_gpt2.py \
    --data_root=.devdata --dataset=shakespeare --kernels=triton --gradient_accumulation_steps=8 --max_iters=30 \
    --eval_interval=1000 --eval_iters=2 --log_interval=1 --out_dir=/tmp/out_$1 "${@:2}" > $OUT/gpt2_$1.log 2>&1
  echo "[rc=$?]" >> $OUT/gpt2_$1.log
}
gpt2 single_plain
gpt2 single_graphed --cuda_graph=True
python docs/runs/2026-11-24-issue8-s3/summary.py single_plain single_graphed > $OUT/summary.txt
cat $OUT/summary.txt; tail -3 $OUT/tests.txt
