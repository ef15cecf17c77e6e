#!/bin/bash
# issue 6, session 5, call 4: Newton-Schulz's wide stacks in groups of 3 + 2 steps: speed and error (ns_groups.py),
# bench's optimizer table, CUDA tests, Shakespeare-char with Muon (val loss at 1000 <= 1.47?)
export PYTHONUNBUFFERED=1
timeout 110 python docs/runs/2026-11-22-issue6-s5/ns_groups.py > $OUT/ns_groups.txt 2>&1; cut -c1-300 $OUT/ns_groups.txt
timeout 160 python bench.py --optim > $OUT/bench_opt.txt 2>&1; tail -5 $OUT/bench_opt.txt | head -4
timeout 150 python -m pytest -q tests/test_newton_schulz.py tests/test_muon.py tests/test_muon_update.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null 2>&1
timeout 160 python train.py config/train_shakespeare_char.py --optimizer=muon --max_iters=1050 --lr_decay_iters=1050 --eval_interval=250 --log_interval=250 --out_dir=/tmp/m > $OUT/train_muon_1050.txt 2>&1; grep -E "^step|^muon|rror|replayed" $OUT/train_muon_1050.txt | tail -8
