# device call 1 (nvidia-h100-x2, lent this session; nvidia-h200-x4 is still not lent)
# 1. issue 8's several-GPU point at the 2 GPUs there are: scaling.sh 2 (one GPU, then torchrun on 2,
#    same global batch of 40 x 12 x 1024 tokens, config/train_gpt2.py as it is)
# 2. the DDP tests with a real second GPU (world = 2; last session they ran at world = 1)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=.devdata/input.txt
nvidia-smi --query-gpu=name,memory.total,clocks_throttle_reasons.active,power.limit --format=csv > $OUT/gpus.txt
nvidia-smi topo -m >> $OUT/gpus.txt 2>&1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
bash docs/runs/2026-11-24-issue8-s3/scaling.sh 2 > /dev/null
timeout 200 python -m pytest -q tests/test_step_graph.py tests/test_train.py -k ddp > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt
cat $OUT/gpus.txt; head -3 $OUT/scaling.txt; tail -1 $OUT/scaling.txt; tail -3 $OUT/tests.txt
