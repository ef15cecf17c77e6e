# call 5: (1) does GPT-2 with GELU's tanh form train the same with every kernel (the MLP in cuBLASLt's epilogues)
# as with PyTorch's ops? GPT-2 124M on Tiny Shakespeare in GPT-2 BPE (prepared here, carried in .devdata), 600
# iterations of 12x1024, same seed, the two runs sharing the GPU (times not comparable), as the fifth session's
# call 3. (2) bench's three variants not timed yet with the tanh form: eager both, and compiled without the graph.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
bpe() {  # log name, kernels
  timeout 330 python train.py config/train_gpt2.py --dataset=shakespeare --data_root=.devdata \
    --gradient_accumulation_steps=1 --max_iters=600 --lr_decay_iters=600 --warmup_iters=60 --eval_interval=50 \
    --eval_iters=20 --log_interval=10 --always_save_checkpoint=False --kernels=$2 --seed=1337 \
    --gelu_approximate=tanh --out_dir=/tmp/$1 --kernels_cache=/tmp/kc_$1.json > $OUT/$1.log 2>&1
  echo "rc $?" >> $OUT/$1.log
}
bpe gpt2_bpe_tanh_triton triton &
bpe gpt2_bpe_tanh_torch torch &
wait
grep -h "val loss" $OUT/gpt2_bpe_tanh_triton.log | tail -2; grep -h "val loss" $OUT/gpt2_bpe_tanh_torch.log | tail -2; tail -n 2 $OUT/gpt2_bpe_*.log
timeout 230 python bench.py --autocast_residual=True --gelu_approximate=tanh --bench_dir=$OUT/tanh \
  --variants="baseline eager,kernels eager,kernels compiled" > $OUT/bench_tanh.txt 2>&1; echo "rc $?" >> $OUT/bench_tanh.txt
grep -v "^\s*$" $OUT/bench_tanh.txt | tail -12
