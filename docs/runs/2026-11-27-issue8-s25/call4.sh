# call 4: bench's step timing against steps back to back (step_timing_probe.py), GELU's tanh form; and train.py's
# logged time per iteration on the same machine (config/train_gpt2.py: compiled, the step graphed; one micro-step)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 250 python docs/runs/2026-11-27-issue8-s25/step_timing_probe.py --autocast_residual=True --gelu_approximate=tanh \
  --bench_dir=$OUT/bench --variants="baseline compiled,kernels compiled graphed,kernels eager graphed" > $OUT/bench.txt 2>&1
echo "rc $?" >> $OUT/bench.txt
grep -E "timing probe|ms/iter|variant|baseline compiled  |graphed  |rc " $OUT/bench.txt | tail -12
common="config/train_gpt2.py --data_root=.devdata --dataset=shakespeare --max_iters=80 --eval_interval=1000
        --eval_iters=2 --log_interval=10 --gradient_accumulation_steps=1 --autocast_residual=True --gelu_approximate=tanh"
timeout 200 python train.py $common --out_dir=/tmp/tanh > $OUT/train.log 2>&1; echo "train rc $?" >> $OUT/train.log
grep "^iter\|rc " $OUT/train.log | tail -6
