# call 7: (1) bench's profile of kernels compiled graphed (tanh) with Inductor's kernels named by what they fuse;
# (2) train.py (config/train_gpt2.py: compiled, graphed, one micro-step, tanh) on Shakespeare and on random tokens,
# 150 iterations each, the GPU's SM clock and power sampled every 100 ms: why train.py logs ~23.5 ms an iteration
# where bench times 22.6 (call 4)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
TORCHINDUCTOR_UNIQUE_KERNEL_NAMES=1 timeout 200 python bench.py --autocast_residual=True --gelu_approximate=tanh --profile \
  --profile_variant="kernels compiled graphed" --variants="kernels compiled graphed" --bench_dir=$OUT/prof > $OUT/prof.txt 2>&1
echo "rc $?" >> $OUT/prof.txt; rm -f $OUT/prof/trace.json
grep -A45 "GPU busy" $OUT/prof.txt | head -46
common="config/train_gpt2.py --data_root=.devdata --max_iters=150 --eval_interval=1000 --eval_iters=2 --log_interval=10
        --gradient_accumulation_steps=1 --autocast_residual=True --gelu_approximate=tanh"
for ds in shakespeare random; do
  nvidia-smi --query-gpu=timestamp,clocks.sm,power.draw,temperature.gpu,clocks_throttle_reasons.active --format=csv -lms 100 > $OUT/smi_$ds.csv &
  SMI=$!
  timeout 200 python train.py $common --dataset=$ds --out_dir=/tmp/$ds > $OUT/train_$ds.log 2>&1; echo "train rc $?" >> $OUT/train_$ds.log
  kill $SMI
  echo "== $ds"; grep "^iter" $OUT/train_$ds.log | awk 'NR%2==0' | tail -7
  python - "$OUT/smi_$ds.csv" <<'PY'
import csv, sys, statistics
rows = list(csv.reader(open(sys.argv[1])))[1:]
clk = [float(r[1].split()[0]) for r in rows if r[1].strip().split()[0].isdigit()]
pw = [float(r[2].split()[0]) for r in rows if r[2].strip().split()[0].replace('.', '').isdigit()]
busy = [c for c, p in zip(clk, pw) if p > 300]
print(f"samples {len(clk)}; under load (>300 W): {len(busy)}, SM clock median {statistics.median(busy) if busy else 0:.0f} MHz "
      f"(min {min(busy) if busy else 0:.0f}), power median {statistics.median([p for p in pw if p > 300] or [0]):.0f} W; "
      f"throttle reasons seen: {sorted(set(r[4].strip() for r in rows))}")
PY
done
