# Call 3 (nvidia-h100-x1, carry .devdata): where the compiled step peaks with recompute='mlp' (call 2: LLaMA's compiled
# graphed step kept 3,902 MiB against the eager graphed step's 3,168), LLaMA and GPT-2; then the Shakespeare-char
# config compiled with compile_mode='reduce-overhead' and compiled alone, as the config's comment and README compare
# them with the graphed step (call 2: 6.25 ms), timed by the fixed logging.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
P=docs/runs/2026-11-26-issue8-s18/peak.py
timeout 200 python $P arch=llama compiled=1 recompute=mlp out=$OUT/peak_llama_mlp.txt > $OUT/peak_log.txt 2>&1; echo "llama rc=$?"
timeout 200 python $P arch=gpt2 compiled=1 recompute=mlp out=$OUT/peak_gpt2_mlp.txt >> $OUT/peak_log.txt 2>&1; echo "gpt2 rc=$?"
for f in $OUT/peak_*_mlp.txt; do echo "== $f"; head -30 $f | cut -c1-200; done
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
char() {  # $1: a name, then overrides
  name=$1; shift
  timeout 150 python train.py config/train_shakespeare_char.py --max_iters=1000 --eval_interval=250 \
    --out_dir=/tmp/out_$name "$@" > $OUT/char_$name.log 2>&1
  echo "[rc=$?]" >> $OUT/char_$name.log
  grep -E "^step|rc=" $OUT/char_$name.log | tail -3
}
char ro --cuda_graph=False --compile_mode=reduce-overhead
char compiled --cuda_graph=False
