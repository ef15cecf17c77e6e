# Call 2 (nvidia-h100-x2, carry .devdata): DDP on two GPUs with the eager step's sparse embedding gradient (not run on
# GPUs before): train.py's DDP tests at world 2 (plain and graphed, eager and compiled), then GPT-2 124M eager (the
# step graphed, the sparse gradient on) on BPE Shakespeare, one GPU then two, with scaling.py's ratio and loss check.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
nvidia-smi -L
timeout 330 python -m pytest -q tests/test_train.py -k "ddp" > $OUT/tests_ddp.txt 2>&1
echo "== tests ddp rc=$?"; grep -E "FAILED|passed|failed" $OUT/tests_ddp.txt | tail -5
common="config/train_gpt2.py --data_root=.devdata --dataset=shakespeare --max_iters=25 --eval_interval=1000
        --eval_iters=2 --log_interval=1 --compile=False"
timeout 100 python train.py $common --out_dir=/tmp/single > $OUT/gpt2_single.log 2>&1
echo "== single rc=$?"
timeout 100 python -m torch.distributed.run --standalone --nproc_per_node=2 train.py $common --out_dir=/tmp/ddp2 > $OUT/gpt2_ddp2.log 2>&1
echo "== ddp2 rc=$?"; grep -E "ddp:|kernels:|cuda_graph" $OUT/gpt2_ddp2.log | head -6
python docs/runs/2026-11-24-issue8-s3/scaling.py $OUT/gpt2_single.log $OUT/gpt2_ddp2.log 2 | tee $OUT/scaling.txt
