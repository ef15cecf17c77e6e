#!/bin/bash
# issue 7, call 6: CUDA tests (norm's wide rows, the chooser, the model); sample.py measured; bench.py --optim
export PYTHONUNBUFFERED=1
timeout 240 python -m pytest -q tests/test_norm.py tests/test_choose.py tests/test_model.py -k "not wandb and not openwebtext" -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   |FAILED|passed|failed" $OUT/tests.txt | cut -c1-300 | head -12
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null 2>&1
timeout 150 python train.py config/train_shakespeare_char.py --max_iters=60 --eval_interval=60 --eval_iters=10 --log_interval=30 --out_dir=/tmp/sc --compile=False > $OUT/train.txt 2>&1; grep -E "^kernels|^  [a-z_]+: (triton|torch)|^step|rror" $OUT/train.txt | cut -c1-200
timeout 120 python sample.py --out_dir=/tmp/sc --num_samples=1 --max_new_tokens=100 > $OUT/sample.txt 2>&1; head -12 $OUT/sample.txt | cut -c1-200
/usr/bin/time -f "wall %e s" timeout 330 python bench.py --optim --out_dir=/tmp/op > $OUT/optim.txt 2>&1; grep -vE "^number of|^AdamW lr|^Muon" $OUT/optim.txt | tail -12 | cut -c1-250
