#!/bin/bash
# issue 6, call 1: Shakespeare-char convergence (AdamW vs Muon, 4 runs side by side on one GPU) + CUDA tests
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
python data/shakespeare_char/prepare.py .devdata/input.txt > $OUT/prepare.txt 2>&1 || cat $OUT/prepare.txt
C="config/train_shakespeare_char.py --log_interval=50"
timeout 560 python train.py $C --out_dir=/tmp/adamw > $OUT/adamw_5000.log 2>&1 &
timeout 560 python train.py $C --out_dir=/tmp/m1 --optimizer=muon > $OUT/muon_5000_lr0.02.log 2>&1 &
timeout 560 python train.py $C --out_dir=/tmp/m2 --optimizer=muon --max_iters=3500 --lr_decay_iters=3500 > $OUT/muon_3500_lr0.02.log 2>&1 &
timeout 560 python train.py $C --out_dir=/tmp/m3 --optimizer=muon --max_iters=3500 --lr_decay_iters=3500 --muon_lr=0.04 > $OUT/muon_3500_lr0.04.log 2>&1 &
sleep 60  # the tests after the compiles, beside the runs
timeout 300 python -m pytest -q tests/test_muon.py tests/test_newton_schulz.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
wait
for f in $OUT/*.log; do echo "== $f"; grep -E "^step|Error|error" $f | tail -40; grep "^iter" $f | tail -1; done
