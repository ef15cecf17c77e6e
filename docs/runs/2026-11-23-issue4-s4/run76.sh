#!/bin/bash
# issue 4, session 4, call 6: Shakespeare-char trained with the packed Triton attention and with SDPA
# (dropout 0: the kernel has none), compiled, the rest of the ops as 'auto' picks them; val curves side by side
export PYTHONUNBUFFERED=1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
for a in True False; do
  timeout 240 python train.py config/train_shakespeare_char.py --dropout=0.0 --max_iters=1500 --lr_decay_iters=1500 \
    --use_triton_attention=$a --out_dir=/tmp/out_$a --kernels_cache=/tmp/kc.json > $OUT/train_attention_$a.txt 2>&1
  echo "use_triton_attention=$a rc $?"; grep "^kernels:\|step .*val" $OUT/train_attention_$a.txt | head -12
  grep "^iter 1490" $OUT/train_attention_$a.txt
done
