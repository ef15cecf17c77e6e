# Eleventh session, call 3 (nvidia-h100-x1, carry .devdata): the loss's chunk in the model.
# CUDA tests of the change, then kernels compiled graphed with the op's 200 MiB chunk and the model's new
# default (400 MiB: 3 chunks of GPT-2's 12 x 1024 tokens) in turn, twice each, on one machine.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
timeout 240 python -m pytest -q -x tests/test_linear_cross_entropy.py tests/test_choose.py > $OUT/tests.txt 2>&1
echo "== tests rc=$?"; tail -3 $OUT/tests.txt
run() {  # run <name> <bench args...>
  local name=$1; shift
  timeout 110 python bench.py --autocast_residual=True --bench_dir=/tmp/b_$name "$@" > $OUT/$name.txt 2>&1
  echo "== $name rc=$?"; grep -E "^ *(baseline|kernels) (eager|compiled)|cross_entropy:|rror" $OUT/$name.txt | cut -c1-170
}
V="kernels compiled graphed"
run chunk200_1 --variants="$V" --loss_chunk_mib=200
run chunk400_1 --variants="$V"
run chunk200_2 --variants="$V" --loss_chunk_mib=200
run chunk400_2 --variants="$V"
