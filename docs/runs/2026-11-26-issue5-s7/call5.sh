# Call 5 (nvidia-h100-x1, carry .devdata): the convergence checks again, now that kernels off is nanoGPT's loss (bf16
# log-softmax under autocast) and split. (1) GPT-2 124M on Tiny Shakespeare in GPT-2 BPE, 600 iterations of 12x1024
# (as docs/runs/2026-11-24-issue8-s1/call5), kernels='triton' against 'torch', seed 1337, sharing the GPU.
# (2) config/train_shakespeare_char.py as it is (5000 iterations, the step graphed), kernels on (attention off: dropout)
# against off (as docs/runs/2026-11-24-issue8-s2/call6), sharing the GPU (times not comparable).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
bpe() {  # log name, kernels
  timeout 300 python train.py config/train_gpt2.py --dataset=shakespeare --data_root=.devdata \
    --gradient_accumulation_steps=1 --max_iters=600 --lr_decay_iters=600 --warmup_iters=60 --eval_interval=50 \
    --eval_iters=20 --log_interval=10 --always_save_checkpoint=False --kernels=$2 --seed=1337 \
    --out_dir=/tmp/$1 --kernels_cache=/tmp/kc_$1.json > $OUT/$1.log 2>&1
  echo "rc $?" >> $OUT/$1.log
}
bpe gpt2_bpe_triton triton &
bpe gpt2_bpe_torch torch &
wait
grep "^step 600" $OUT/gpt2_bpe_*.log
char() {  # kernels, extra
  timeout 250 python train.py config/train_shakespeare_char.py --kernels=$1 $2 --out_dir=/tmp/char_$1 \
    --kernels_cache=/tmp/kc_char_$1.json > $OUT/train_kernels_$1.log 2>&1
  echo "[rc=$?]" >> $OUT/train_kernels_$1.log
}
char triton --use_triton_attention=False &
char torch &
wait
grep "^step 5000" $OUT/train_kernels_*.log; tail -1 $OUT/train_kernels_*.log
