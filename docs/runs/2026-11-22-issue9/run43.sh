#!/bin/bash
# issue 9: the step time with and without the per-step non-finite check (its host sync): GPT-2 124M
# compiled, batch 12x1024, one micro-step, random tokens; wall clock between the logs of iters 50 and 250
export PYTHONUNBUFFERED=1
python -c "
import numpy as np, os
os.makedirs('data/randtok', exist_ok=True)
rng = np.random.default_rng(0)
for s, n in (('train', 20_000_000), ('val', 1_000_000)):
    rng.integers(0, 50257, n, dtype=np.uint16).tofile(f'data/randtok/{s}.bin')
"
for rep in 1 2; do for v in old new; do
  cp .devdata/train_$v.py train_$v.py
  timeout 200 python train_$v.py config/train_gpt2.py --dataset=randtok --batch_size=12 --gradient_accumulation_steps=1 \
    --max_iters=250 --eval_interval=100000 --log_interval=50 --out_dir=/tmp/t_$v --always_save_checkpoint=False \
    --kernels_cache=/tmp/kc.json > $OUT/ab_${v}_$rep.txt 2>&1; echo "$v rc $?"
done; done
python - <<'P'
import re, os
for f in sorted(os.listdir(os.environ['OUT'])):
    if f.startswith('ab_'):
        t = {int(i): float(s) for s, i in re.findall(r"^t=([\d.]+) iter (\d+):", open(os.environ['OUT'] + '/' + f).read(), re.M)}
        print(f, f"{(t[250] - t[50]) / 200 * 1000:.3f} ms/step over iters 50-250")
P
