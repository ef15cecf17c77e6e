# device call 6: config/train_shakespeare_char.py as it is now (the whole step as one CUDA graph),
# 5000 iterations, kernels on (Triton everywhere but the attention, which has no dropout) vs off,
# one after the other, alone on the GPU: the README's plot
export PYTHONUNBUFFERED=1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
run() {
  timeout 250 python train.py config/train_shakespeare_char.py --kernels=$1 $2 --out_dir=/tmp/out_$1 > $OUT/train_kernels_$1.log 2>&1
  echo "[rc=$?]" >> $OUT/train_kernels_$1.log
}
run triton --use_triton_attention=False
run torch
