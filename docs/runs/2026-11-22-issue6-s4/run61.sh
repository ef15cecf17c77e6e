#!/bin/bash
# issue 6, session 4, call 8: Shakespeare-char with Muon on the final code (paired steps, sums of squares from the momentum kernel):
# does it still end at val loss <= 1.47 after 1050 iterations (README: 1.4673 with the first muon.py)?
export PYTHONUNBUFFERED=1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null 2>&1
timeout 400 python train.py config/train_shakespeare_char.py --optimizer=muon --max_iters=1050 --lr_decay_iters=1050 --eval_interval=250 --log_interval=250 --out_dir=/tmp/m > $OUT/train_muon_1050.txt 2>&1; grep -E "^step|^iter|^muon|rror|replayed" $OUT/train_muon_1050.txt | tail -16
