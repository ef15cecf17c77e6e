# Eleventh session, call 4 (nvidia-h100-x1, carry .devdata): 2 chunks (600 MiB) against the new default (400 MiB),
# LLaMA at 200 and 400 MiB, then the six GPT-2 variants with the new default.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
run() {  # run <name> <timeout> <bench args...>
  local name=$1 limit=$2; shift 2
  timeout $limit python bench.py --autocast_residual=True --bench_dir=/tmp/b_$name "$@" > $OUT/$name.txt 2>&1
  echo "== $name rc=$?"; grep -E "^ *(baseline|kernels) (eager|compiled)|cross_entropy:|rror" $OUT/$name.txt | cut -c1-170
}
V="kernels compiled graphed"
run chunk600_1 100 --variants="$V" --loss_chunk_mib=600
run chunk400_3 100 --variants="$V"
run llama_chunk200 110 --variants="$V" --arch=llama --n_kv_head=4 --loss_chunk_mib=200
run llama_chunk400 110 --variants="$V" --arch=llama --n_kv_head=4
run six 280
