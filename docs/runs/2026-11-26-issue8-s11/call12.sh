# Eleventh session, call 12 (nvidia-h100-x1): the model's loss chunk is now 400 MiB or 4096 rows, whichever is more.
# bench's op table for the loss at a LLaMA-3-sized vocabulary (the model's shapes: 12 x 1024 tokens, V = 131072).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 300 python bench.py --kernels --kernel_ops=cross_entropy --vocab_size=131072 --bench_dir=/tmp/b_ce > $OUT/bench_ce_v131072.txt 2>&1
echo "== bench_ce rc=$?"; grep -E "^\[|fwdbwd" $OUT/bench_ce_v131072.txt | head -20
