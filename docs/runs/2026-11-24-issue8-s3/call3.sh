# device call 3 (H100):
# 1. scaling.sh at N=1: the several-GPU script runs end to end (its figures mean nothing on one GPU)
# 2. why plain DDP is slower than one process (call 1: 270 vs 212 ms per 8 micro-steps): the same
#    DDP run with Dynamo's DDP graph splitting off (optimize_ddp=False), and DDP eager (no
#    compile) plain and graphed
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
bash docs/runs/2026-11-24-issue8-s3/scaling.sh 1
gpt2() {  # name, script, extra args
  timeout 100 python -m torch.distributed.run --standalone --nproc_per_node=1 $2 config/train_gpt2.py \
    --data_root=.devdata --dataset=shakespeare --kernels=triton --gradient_accumulation_steps=8 --max_iters=30 \
    --eval_interval=1000 --eval_iters=2 --log_interval=1 --out_dir=/tmp/out_$1 "${@:3}" > $OUT/gpt2_$1.log 2>&1
  echo "[rc=$?]" >> $OUT/gpt2_$1.log
}
gpt2 ddp_plain_optimize_ddp_off docs/runs/2026-11-24-issue8-s3/optimize_ddp_off.py --cuda_graph=False
gpt2 ddp_eager_plain train.py --compile=False --cuda_graph=False
gpt2 ddp_eager_graphed train.py --compile=False --cuda_graph=True
python docs/runs/2026-11-24-issue8-s3/summary.py ddp_plain_optimize_ddp_off ddp_eager_plain ddp_eager_graphed > $OUT/summary.txt
cat $OUT/summary.txt
