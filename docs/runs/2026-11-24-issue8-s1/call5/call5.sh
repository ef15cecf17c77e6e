# device call 5: (1) GPT-2 124M on Tiny Shakespeare in GPT-2 BPE (prepared on the CPU machine:
# python data/shakespeare/prepare.py input.txt --out_dir .devdata/shakespeare), 600 iterations of
# 12x1024 tokens, compiled: every Triton kernel (kernels='triton') against PyTorch, same seed, and
# PyTorch with another seed as the noise reference; the three share the GPU. (2) Alone, one after
# the other: the Shakespeare-char config, 1000 iterations, compile_mode default vs reduce-overhead.
export PYTHONUNBUFFERED=1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
bpe() {  # log name, kernels, seed
  timeout 330 python train.py config/train_gpt2.py --dataset=shakespeare --data_root=.devdata \
    --gradient_accumulation_steps=1 --max_iters=600 --lr_decay_iters=600 --warmup_iters=60 --eval_interval=50 \
    --eval_iters=20 --log_interval=10 --always_save_checkpoint=False --kernels=$2 --seed=$3 \
    --out_dir=/tmp/$1 --kernels_cache=/tmp/kc_$1.json > $OUT/$1.log 2>&1
  echo "rc $?" >> $OUT/$1.log
}
bpe gpt2_bpe_triton triton 1337 &
bpe gpt2_bpe_torch torch 1337 &
bpe gpt2_bpe_torch_seed1338 torch 1338 &
wait
for m in default reduce-overhead; do
  timeout 150 python train.py config/train_shakespeare_char.py --max_iters=1000 --lr_decay_iters=1000 \
    --eval_interval=1000 --eval_iters=20 --compile_mode=$m --out_dir=/tmp/char_$m --kernels_cache=/tmp/kc_char.json \
    > $OUT/char_compile_$m.log 2>&1
  echo "rc $?" >> $OUT/char_compile_$m.log
done
