#!/bin/bash
# issue 6, call 2: iterations needed for val 1.47, speedrun style: for each optimizer, complete runs of N
# iterations (the lr decayed to min_lr at N), N swept; all side by side on one GPU
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
python data/shakespeare_char/prepare.py .devdata/input.txt > $OUT/prepare.txt 2>&1 || cat $OUT/prepare.txt
C="config/train_shakespeare_char.py --log_interval=50"
for n in 1000 1250 1500 1750 2000 2500; do
  timeout 570 python train.py $C --out_dir=/tmp/a$n --max_iters=$n --lr_decay_iters=$n > $OUT/adamw_$n.log 2>&1 &
done
for n in 750 1000 1250 1500; do
  timeout 570 python train.py $C --out_dir=/tmp/m$n --optimizer=muon --max_iters=$n --lr_decay_iters=$n > $OUT/muon_$n.log 2>&1 &
done
wait
for f in $OUT/*.log; do echo "== $f $(grep -E '^step' $f | tail -3 | tr '\n' ' ')"; grep -E "Error|error" $f | tail -3; done
