#!/bin/bash
# call 12: Muon under DDP on two GPUs (NCCL): each rank orthogonalises half of each stack, all-gathered
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null 2>&1
timeout 240 torchrun --standalone --nproc_per_node=2 train.py config/train_shakespeare_char.py --optimizer=muon --max_iters=300 --lr_decay_iters=300 --eval_interval=100 --log_interval=50 --gradient_accumulation_steps=2 --compile=False --out_dir=/tmp/ddp > $OUT/ddp_muon.txt 2>&1; grep -E "^step|^iter|ddp|^muon|rror|tokens per" $OUT/ddp_muon.txt | tail -16
