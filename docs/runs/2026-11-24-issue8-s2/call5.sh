# device call 5: call 4's Shakespeare-char runs again (call 4 had not carried the data): the config as
# set (reduce-overhead; the eval at 250 after marking a step per eval batch) and with the whole step
# as one CUDA graph instead, one after the other, alone on the GPU
export PYTHONUNBUFFERED=1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
char() {  # $1: a name, then overrides
  name=$1; shift
  timeout 150 python train.py config/train_shakespeare_char.py --max_iters=1000 --eval_interval=250 \
    --out_dir=/tmp/out_$name "$@" > $OUT/char_$name.log 2>&1
  echo "[rc=$?]" >> $OUT/char_$name.log
}
char ro
char graph --compile_mode=default --cuda_graph=True
