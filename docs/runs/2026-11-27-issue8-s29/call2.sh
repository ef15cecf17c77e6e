# call 2: the tables not yet run with the copies (the twenty-eighth session's list): LLaMA's six variants, GPT-2's six
# with GELU's tanh form, and bench.py --optim with its forward+backward column per optimizer
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
timeout 220 python bench.py --autocast_residual=True --arch=llama --n_kv_head=4 --bench_dir=/tmp/llama > $OUT/bench_llama.txt 2>&1
echo "llama rc $? t=$(( $(date +%s) - t0 ))"; tail -9 $OUT/bench_llama.txt
timeout 200 python bench.py --autocast_residual=True --gelu_approximate=tanh --bench_dir=/tmp/tanh > $OUT/bench_tanh.txt 2>&1
echo "tanh rc $? t=$(( $(date +%s) - t0 ))"; tail -9 $OUT/bench_tanh.txt
timeout 150 python bench.py --optim --autocast_residual=True --bench_dir=/tmp/optim > $OUT/bench_optim.txt 2>&1
echo "optim rc $? t=$(( $(date +%s) - t0 ))"; tail -12 $OUT/bench_optim.txt
