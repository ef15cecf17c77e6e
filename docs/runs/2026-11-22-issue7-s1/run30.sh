#!/bin/bash
# call 13: kernels='auto' measured: CUDA tests of the chooser, train.py twice (the second start from the cache)
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
timeout 120 python -m pytest -q tests/test_choose.py tests/test_model.py -k "not wandb and not openwebtext" -p no:cacheprovider --tb=short > $OUT/tests.txt 2>&1; grep -E "^E   [A-Za-z]|FAILED|passed|failed" $OUT/tests.txt | cut -c1-250 | head -12
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null 2>&1
for i in 1 2; do /usr/bin/time -f "wall %e s" timeout 200 python train.py config/train_shakespeare_char.py --max_iters=100 --eval_interval=100 --log_interval=50 --out_dir=/tmp/k$i --kernels_cache=/tmp/kc.json > $OUT/train_$i.txt 2>&1; grep -E "^kernels|^  [a-z_]+: (triton|torch)|^step|^iter 100|rror|wall" $OUT/train_$i.txt | cut -c1-200; done
cp /tmp/kc.json $OUT/
timeout 200 python train.py config/train_gpt2.py --dataset=shakespeare_char --max_iters=20 --eval_interval=1000 --log_interval=10 --gradient_accumulation_steps=1 --out_dir=/tmp/g --kernels_cache=/tmp/kc.json > $OUT/train_gpt2.txt 2>&1; grep -E "^kernels|^  [a-z_]+: (triton|torch)|^iter 20|rror" $OUT/train_gpt2.txt | cut -c1-200
