# call 3 (nvidia-h100-x2): the copies (now with the LM head's) under DDP on GPUs, which no session had run: scaling.sh's
# two runs (GPT-2 124M, config/train_gpt2.py, BPE Shakespeare; train.py checks the copies agree across ranks after
# DDP's broadcast and the weights at the end), the one-GPU run on GPU 0 while call 1's cut-off tests (their 170 s ran
# out) run on GPU 1; the 2-GPU run after both
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
(CUDA_VISIBLE_DEVICES=1 timeout 280 python -m pytest -q -rA tests/test_linear_cross_entropy.py tests/test_adamw.py \
  tests/test_model.py -k "weight_copy or copies" > $OUT/tests.txt 2>&1; echo "tests rc $?" >> $OUT/tests.txt) &
common="config/train_gpt2.py --data_root=.devdata --dataset=shakespeare --max_iters=25 --eval_interval=1000
        --eval_iters=2 --log_interval=1"
CUDA_VISIBLE_DEVICES=0 timeout 280 python train.py $common --out_dir=/tmp/scaling_single > $OUT/scaling_single.log 2>&1
echo "[rc=$?]" >> $OUT/scaling_single.log; echo "single t=$(( $(date +%s) - t0 ))"
wait; echo "tests t=$(( $(date +%s) - t0 ))"; grep -E "PASSED|FAILED|ERROR|passed|failed" $OUT/tests.txt | tail -14
timeout 250 python -m torch.distributed.run --standalone --nproc_per_node=2 train.py $common \
  --out_dir=/tmp/scaling_ddp2 > $OUT/scaling_ddp2.log 2>&1
echo "[rc=$?]" >> $OUT/scaling_ddp2.log; echo "ddp t=$(( $(date +%s) - t0 ))"
python docs/runs/2026-11-24-issue8-s3/scaling.py $OUT/scaling_single.log $OUT/scaling_ddp2.log 2 | tee $OUT/scaling.txt | head -4
grep -h "keeps\|ddp:\|rc=" $OUT/scaling_single.log $OUT/scaling_ddp2.log
