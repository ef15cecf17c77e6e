# Call 10 (nvidia-h100-x2, carry .devdata): DDP at 2 ranks with cuBLAS without its workspace (train.py's new default): the graphed DDP tests, and GPT-2 124M eager graphed, one GPU then two, as the fourteenth session's call 6.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
nvidia-smi -L
timeout 150 python -m pytest -q tests/test_train.py -k "ddp_step_replayed" > $OUT/tests_ddp.txt 2>&1
echo "== tests ddp rc=$?"; grep -E "FAILED|passed|failed" $OUT/tests_ddp.txt | tail -3
common="config/train_gpt2.py --data_root=.devdata --dataset=shakespeare --max_iters=25 --eval_interval=1000
        --eval_iters=2 --log_interval=1 --compile=False"
timeout 70 python train.py $common --out_dir=/tmp/single > $OUT/gpt2_single.log 2>&1
echo "== single rc=$?"
timeout 70 python -m torch.distributed.run --standalone --nproc_per_node=2 train.py $common --out_dir=/tmp/ddp2 > $OUT/gpt2_ddp2.log 2>&1
echo "== ddp2 rc=$?"; grep -E "ddp:" $OUT/gpt2_ddp2.log | head -2
python docs/runs/2026-11-24-issue8-s3/scaling.py $OUT/gpt2_single.log $OUT/gpt2_ddp2.log 2 > $OUT/scaling.txt; head -1 $OUT/scaling.txt; tail -1 $OUT/scaling.txt
