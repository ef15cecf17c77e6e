#!/bin/bash
# issue 6, session 4, call 10 (review): Muon skips non-finite steps on the device (found_inf): CUDA tests, the
# non-finite and fp16 reliability tests, a short fp16 Muon run (GradScaler hands found_inf over), bench's optimizer table
export PYTHONUNBUFFERED=1 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
timeout 200 python -m pytest -q tests/test_muon.py tests/test_muon_update.py tests/test_newton_schulz.py -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -16
timeout 200 python -m pytest -q tests/test_reliability.py -k "nonfinite or fp16" -p no:cacheprovider --tb=short > $OUT/tests_reliability.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests_reliability.txt | cut -c1-250 | head -16
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null 2>&1
timeout 150 python train.py config/train_shakespeare_char.py --optimizer=muon --dtype=float16 --max_iters=300 --lr_decay_iters=300 --eval_interval=150 --log_interval=150 --out_dir=/tmp/m16 > $OUT/train_muon_fp16.txt 2>&1; grep -E "^step|^iter|^muon|rror|skipped" $OUT/train_muon_fp16.txt | tail -8
timeout 150 python bench.py --optim > $OUT/bench_opt.txt 2>&1; tail -5 $OUT/bench_opt.txt | head -4
