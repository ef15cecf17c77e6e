# device call 3: the compiled training step with and without CUDA graphs (compile_mode), GPT-2 124M;
# and the launch-cost script again (its compiled-kernel rows failed in call 2)
V="baseline compiled,kernels compiled"
for m in default reduce-overhead; do
  timeout 250 python bench.py --variants="$V" --compile_mode=$m --bench_dir=$OUT/$m > $OUT/bench_$m.txt 2>&1
  echo "[rc=$?]" >> $OUT/bench_$m.txt
done
timeout 60 python -u docs/runs/2026-11-24-issue4-s5/launch_cost.py > $OUT/launch_cost.txt 2>&1
