# Issue 8's several-GPU point, ready for when `status` lends nvidia-h200-x4:
#   bash docs/runs/2026-11-24-issue8-s3/scaling.sh 4
# GPT-2 124M, config/train_gpt2.py as it is (global batch 40 x 12 x 1024 tokens, compiled, the step
# graphed, kernels='auto'), on BPE Shakespeare (.devdata/shakespeare, carried): one process on one
# GPU, then torchrun on N GPUs of the same machine (10 micro-steps per rank at N=4). scaling.py
# prints each run's tokens/s per GPU (median over iterations 12-25, after the DDP graph's 11
# warm-up steps), their ratio (target >= 0.90), and the two loss curves.
# Run at N=1 on one H100 (call 6): ratio 0.993, losses within 0.0001 (call 3 had the two logs under one
# name at N=1: the DDP run overwrote the single one).
N=${1:-4}
export PYTHONUNBUFFERED=1
common="config/train_gpt2.py --data_root=.devdata --dataset=shakespeare --max_iters=25 --eval_interval=1000
        --eval_iters=2 --log_interval=1"
timeout 280 python train.py $common --out_dir=/tmp/scaling_single > $OUT/scaling_single.log 2>&1
echo "[rc=$?]" >> $OUT/scaling_single.log
timeout 280 python -m torch.distributed.run --standalone --nproc_per_node=$N train.py $common \
  --out_dir=/tmp/scaling_ddp$N > $OUT/scaling_ddp$N.log 2>&1
echo "[rc=$?]" >> $OUT/scaling_ddp$N.log
python docs/runs/2026-11-24-issue8-s3/scaling.py $OUT/scaling_single.log $OUT/scaling_ddp$N.log $N | tee $OUT/scaling.txt
