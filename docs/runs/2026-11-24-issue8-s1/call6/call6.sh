# device call 6: the CUDA-graph test of tests/test_train.py on CUDA; then the Shakespeare-char
# config as it is now (compile_mode='reduce-overhead'), kernels on vs off, started together as in
# call 4 (shared GPU: their iteration times are not single-run figures); then kernels='auto' alone
# for the config's time per iteration.
export PYTHONUNBUFFERED=1 TINY_SHAKESPEARE=.devdata/input.txt
timeout 200 python -m pytest -q tests/test_train.py -k cuda_graphs > $OUT/tests_cuda.txt 2>&1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
run() {
  timeout 300 python train.py config/train_shakespeare_char.py --kernels=$1 $2 --out_dir=/tmp/out_$1 \
    --kernels_cache=/tmp/kc_$1.json > $OUT/train_kernels_$1.log 2>&1
  echo "rc $?" >> $OUT/train_kernels_$1.log
}
run triton --use_triton_attention=False &
run torch &
wait
run auto
