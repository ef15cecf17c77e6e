# device call 4: the CUDA tests call 3's time limit cut (it stopped, no failure, in its first files), then
# the Shakespeare-char config: as set (reduce-overhead; the eval at 250 after marking a step per eval
# batch) and with the whole step as one CUDA graph instead, one after the other, alone on the GPU
export PYTHONUNBUFFERED=1 TINY_SHAKESPEARE=.devdata/input.txt
KERNELS_AUTOTUNE=0 timeout 300 python -m pytest -q tests/test_norm.py tests/test_model.py tests/test_choose.py \
  tests/test_compile_writes.py -p no:cacheprovider > $OUT/tests_cuda.txt 2>&1
echo "[rc=$?]" >> $OUT/tests_cuda.txt
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
char() {  # $1: a name, then overrides
  name=$1; shift
  timeout 120 python train.py config/train_shakespeare_char.py --max_iters=1000 --eval_interval=250 \
    --out_dir=/tmp/out_$name "$@" > $OUT/char_$name.log 2>&1
  echo "[rc=$?]" >> $OUT/char_$name.log
}
char ro
char graph --compile_mode=default --cuda_graph=True
