# Tenth session, call 5 (nvidia-h100-x1, carry .devdata): the tree before this session (9ecbaf0, in .devdata/before)
# and this one (compile_model's combo kernels) in turn on one machine: GPT-2 twice each, LLaMA once each.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
V="baseline compiled,kernels compiled graphed"
here=$PWD
run() {  # run <name> <tree> <bench args...>
  local name=$1 tree=$2; shift 2
  (cd $tree && timeout 115 python bench.py --autocast_residual=True --variants="$V" --bench_dir=/tmp/b_$name "$@" > $OUT/$name.txt 2>&1)
  echo "== $name rc=$?"; grep -E "^ *(baseline|kernels) (eager|compiled)|losses agree|rror" $OUT/$name.txt | cut -c1-170
}
run gpt2_before_1 .devdata/before
run gpt2_after_1 $here
run gpt2_before_2 .devdata/before
run gpt2_after_2 $here
run llama_before .devdata/before --arch=llama --n_kv_head=4
run llama_after $here --arch=llama --n_kv_head=4
