#!/bin/bash
# issue 9: CUDA tests of the changed scripts, a SIGTERM + resume on the GPU, and the step time of
# GPT-2 124M before/after (the new per-step host sync for the non-finite check)
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader | tee $OUT/gpu.txt
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null 2>&1
python -c "
import numpy as np, os
os.makedirs('data/randtok', exist_ok=True)
rng = np.random.default_rng(0)
for s, n in (('train', 20_000_000), ('val', 1_000_000)):
    rng.integers(0, 50257, n, dtype=np.uint16).tofile(f'data/randtok/{s}.bin')
"
# 1. the step time, old vs new train.py (compiled GPT-2 124M, batch 12x1024, one micro-step, logs every 10)
for v in old new; do
  f=train.py; [ $v = old ] && f=.devdata/train_old.py && cp $f train_old.py && f=train_old.py
  timeout 300 python $f config/train_gpt2.py --dataset=randtok --batch_size=12 --gradient_accumulation_steps=1 \
    --max_iters=150 --eval_interval=100000 --log_interval=10 --out_dir=/tmp/t_$v --always_save_checkpoint=False \
    --kernels_cache=/tmp/kc.json > $OUT/step_$v.txt 2>&1; echo "$v rc $?"
done
python - <<'P'
import re, statistics, os
for v in ('old', 'new'):
    t = [float(m) for i, m in re.findall(r"^iter (\d+): .*time ([\d.]+)ms", open(os.environ['OUT'] + f'/step_{v}.txt').read(), re.M) if int(i) >= 30]
    print(v, 'median ms', statistics.median(t), 'n', len(t), sorted(t))
P
# 2. SIGTERM on the GPU mid-run (compiled), then resume
timeout 300 python train.py config/train_shakespeare_char.py --max_iters=2000 --eval_interval=250 --log_interval=50 --out_dir=/tmp/sig --kernels_cache=/tmp/kc.json > $OUT/sig1.txt 2>&1 &
P=$!; for i in $(seq 1 240); do grep -q "^iter 400:" $OUT/sig1.txt && break; sleep 0.5; done; kill -TERM $P; wait $P; echo "sig rc $?"
timeout 200 python train.py config/train_shakespeare_char.py --max_iters=700 --eval_interval=250 --log_interval=50 --out_dir=/tmp/sig --kernels_cache=/tmp/kc.json --init_from=resume > $OUT/sig2.txt 2>&1; echo "resume rc $?"
grep -E "^step|^iter (400|450|500|700)|stopped|resum|saved|rror|SIGTERM" $OUT/sig1.txt $OUT/sig2.txt | cut -c1-200
