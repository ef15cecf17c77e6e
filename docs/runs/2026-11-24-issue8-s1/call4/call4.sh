# device call 4: config/train_shakespeare_char.py as it is (5000 iterations, dropout 0.2, compiled),
# every Triton kernel that runs with it (kernels='triton'; the attention stays SDPA: it has no
# dropout) against PyTorch (kernels='torch'). The two runs share the GPU (started together),
# so their iteration times are not the single-run figures.
export PYTHONUNBUFFERED=1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
run() {
  timeout 540 python train.py config/train_shakespeare_char.py --kernels=$1 $2 --out_dir=/tmp/out_$1 \
    --kernels_cache=/tmp/kc_$1.json > $OUT/train_kernels_$1.log 2>&1
  echo "rc $?" >> $OUT/train_kernels_$1.log
}
run triton --use_triton_attention=False &
run torch &
wait
