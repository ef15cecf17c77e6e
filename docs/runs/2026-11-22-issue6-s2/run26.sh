#!/bin/bash
# issue 6, call 9: after the graph code's restructuring: CUDA tests and a training run (replays counted)
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 200 python -m pytest -q tests/test_muon.py tests/test_muon_update.py tests/test_newton_schulz.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null 2>&1
timeout 150 python train.py config/train_shakespeare_char.py --optimizer=muon --max_iters=600 --lr_decay_iters=600 --eval_interval=200 --log_interval=100 --out_dir=/tmp/m > $OUT/train_muon.txt 2>&1; grep -E "^step|^iter|^muon|rror" $OUT/train_muon.txt | tail -14
