# Eleventh session, call 7 (nvidia-h100-x1, carry .devdata): LLaMA's six variants with the loss in 400 MiB chunks,
# and GPT-2's eager pair.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
run() {  # run <name> <timeout> <bench args...>
  local name=$1 limit=$2; shift 2
  timeout $limit python bench.py --autocast_residual=True --bench_dir=/tmp/b_$name "$@" > $OUT/$name.txt 2>&1
  echo "== $name rc=$?"; grep -E "^ *(baseline|kernels) (eager|compiled)|rror" $OUT/$name.txt | cut -c1-170
}
run llama_six 330 --arch=llama --n_kv_head=4
run gpt2_eager_pair 200 --variants="baseline eager,kernels eager"
