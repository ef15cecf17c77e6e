# Call 11 (nvidia-h100-x1, carry .devdata): train.py's own 'auto' with the memory rule: GPT-2 124M on BPE Shakespeare,
# compiled, the step graphed (config/train_gpt2.py), one micro-step per iteration, recompute 'none' then 'activation'.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
common="config/train_gpt2.py --data_root=.devdata --dataset=shakespeare --max_iters=30 --eval_interval=1000
        --eval_iters=2 --log_interval=10 --gradient_accumulation_steps=1 --autocast_residual=True"
for rc in none activation; do
  timeout 200 python train.py $common --recompute=$rc --out_dir=/tmp/$rc > $OUT/train_$rc.log 2>&1
  echo "== train $rc rc=$?"; grep "cross_entropy: \|^kernels: [a-z_]*=" $OUT/train_$rc.log | cut -c1-250; grep "^iter" $OUT/train_$rc.log | tail -2
done
