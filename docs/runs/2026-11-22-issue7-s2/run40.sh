#!/bin/bash
# issue 7, call 11 (2 GPUs): under DDP rank 0 measures, broadcasts, and both ranks build the same kernels
export PYTHONUNBUFFERED=1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null 2>&1
timeout 200 torchrun --standalone --nproc_per_node=2 train.py config/train_shakespeare_char.py --compile=False --dropout=0.0 --max_iters=20 --eval_interval=20 --eval_iters=5 --log_interval=10 --gradient_accumulation_steps=2 --out_dir=/tmp/ddp --kernels_cache=None > $OUT/ddp.txt 2>&1; echo rc $?
grep -E "^kernels|^  [a-z_]+: |^iter 20|rror" $OUT/ddp.txt | cut -c1-220
