# call 4: run_probe.py (host time of one cuBLASLt launch, as it is and leaner), then the tanh table's six variants
# with b2464a5 (gelu_mlp reading AdamW's copies)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
timeout 90 python docs/runs/2026-11-27-issue8-s30/run_probe.py > $OUT/run_probe.txt 2>&1; echo "probe rc $?"
cat $OUT/run_probe.txt; echo "t=$(( $(date +%s) - t0 ))"
timeout 260 python bench.py --autocast_residual=True --gelu_approximate=tanh > $OUT/bench_tanh.txt 2>&1
echo "bench rc $?"; grep -A8 "^ *variant" $OUT/bench_tanh.txt; grep "losses agree" $OUT/bench_tanh.txt
echo "t=$(( $(date +%s) - t0 ))"
