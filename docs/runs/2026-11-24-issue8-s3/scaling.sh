# Issue 8's several-GPU point, ready for when `status` lends nvidia-h200-x4:
#   bash docs/runs/2026-11-24-issue8-s3/scaling.sh 4
# GPT-2 124M, config/train_gpt2.py as it is (global batch 40 x 12 x 1024 tokens, compiled, the step
# graphed, kernels='auto'), on BPE Shakespeare (.devdata/shakespeare, carried): one process on one
# GPU, then torchrun on N GPUs of the same machine (10 micro-steps per rank at N=4). scaling.py
# prints each run's tokens/s per GPU (median over iterations 12-25, after the DDP graph's 11
# warm-up steps), their ratio (target >= 0.90), and the two loss curves.
# Validated at N=1 on one H100 (call 3): the script runs end to end; the figures mean nothing there.
N=${1:-4}
export PYTHONUNBUFFERED=1
common="config/train_gpt2.py --data_root=.devdata --dataset=shakespeare --max_iters=25 --eval_interval=1000
        --eval_iters=2 --log_interval=1"
timeout 280 python train.py $common --out_dir=/tmp/scaling_1 > $OUT/scaling_1gpu.log 2>&1
echo "[rc=$?]" >> $OUT/scaling_1gpu.log
timeout 280 python -m torch.distributed.run --standalone --nproc_per_node=$N train.py $common \
  --out_dir=/tmp/scaling_$N > $OUT/scaling_${N}gpu.log 2>&1
echo "[rc=$?]" >> $OUT/scaling_${N}gpu.log
python docs/runs/2026-11-24-issue8-s3/scaling.py $OUT/scaling_1gpu.log $OUT/scaling_${N}gpu.log $N | tee $OUT/scaling.txt
