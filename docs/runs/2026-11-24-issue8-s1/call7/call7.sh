# device call 7: the compiled variants with less of the activations kept for the backward
# (torch.compile's activation memory budget: its partitioner recomputes the rest), GPT-2 124M;
# bench.py with activation_memory_budget.patch applied (the option was not kept)
V="baseline compiled,kernels compiled"
for b in 0.5 0.2; do
  timeout 280 python bench.py --variants="$V" --activation_memory_budget=$b --bench_dir=$OUT/budget_$b > $OUT/bench_budget_$b.txt 2>&1
  echo "[rc=$?]" >> $OUT/bench_budget_$b.txt
done
