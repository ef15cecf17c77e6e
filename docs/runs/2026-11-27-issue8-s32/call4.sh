# call 4 (nvidia-h200-x4): call 3 at four GPUs, the issue's own DDP case, at this tree
# (scaling.sh's two runs: GPT-2 124M, config/train_gpt2.py, BPE Shakespeare, compiled and graphed, 25
# iterations), one GPU, then four; tokens/s per GPU and the losses side by side
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
nvidia-smi --query-gpu=name,power.limit --format=csv > $OUT/gpu.txt
common="config/train_gpt2.py --data_root=.devdata --dataset=shakespeare --max_iters=25 --eval_interval=1000
        --eval_iters=2 --log_interval=1"
CUDA_VISIBLE_DEVICES=0 timeout 250 python train.py $common --out_dir=/tmp/scaling_single > $OUT/scaling_single.log 2>&1
echo "[rc=$?]" >> $OUT/scaling_single.log; echo "single t=$(( $(date +%s) - t0 ))"
timeout 250 python -m torch.distributed.run --standalone --nproc_per_node=4 train.py $common \
  --out_dir=/tmp/scaling_ddp4 > $OUT/scaling_ddp4.log 2>&1
echo "[rc=$?]" >> $OUT/scaling_ddp4.log; echo "ddp t=$(( $(date +%s) - t0 ))"
python docs/runs/2026-11-24-issue8-s3/scaling.py $OUT/scaling_single.log $OUT/scaling_ddp4.log 4 | tee $OUT/scaling.txt | head -4
grep -h "keeps\|ddp:\|rc=\|terminate\|Error" $OUT/scaling_single.log $OUT/scaling_ddp4.log
