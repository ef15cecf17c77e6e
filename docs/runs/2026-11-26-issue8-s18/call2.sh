# Call 2 (nvidia-h100-x1, carry .devdata): the Shakespeare-char config's graphed step timed by train.py's logging as
# fixed in the seventeenth session (the mean per iteration since the last log, after its sync, evals left out),
# kernels as configured ('auto') and all PyTorch, 1000 iterations each, one after the other; then LLaMA with
# recompute='mlp', the setting at or under 0.6x memory for it (the fifth session: 0.52x at 1.07x, before later changes).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
char() {  # $1: a name, then overrides
  name=$1; shift
  timeout 150 python train.py config/train_shakespeare_char.py --max_iters=1000 --eval_interval=250 \
    --out_dir=/tmp/out_$name "$@" > $OUT/char_$name.log 2>&1
  echo "[rc=$?]" >> $OUT/char_$name.log
  grep -E "^step|rc=|cuda_graph" $OUT/char_$name.log | tail -7
}
char auto
char torch --kernels=torch
timeout 300 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --recompute=mlp \
  --variants="baseline compiled,kernels eager graphed,kernels compiled graphed" --bench_dir=/tmp/b > $OUT/bench_llama_mlp.txt 2>&1
echo "== llama mlp rc=$?"; grep -A5 "^Training step" $OUT/bench_llama_mlp.txt | tail -4 | cut -c1-200
