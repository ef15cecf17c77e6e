# Eleventh session, call 9 (nvidia-h100-x4, carry .devdata): a 4-GPU kind is lent at last. Issue 8's
# several-GPU point, as prepared in the third session: one GPU, then torchrun on 4 GPUs of the same machine.
nvidia-smi --query-gpu=name --format=csv,noheader
bash docs/runs/2026-11-24-issue8-s3/scaling.sh 4 > /dev/null
cat $OUT/scaling.txt | head -5; tail -3 $OUT/scaling.txt
grep -E "^\[rc|cuda_graph|kernels:" $OUT/scaling_single.log $OUT/scaling_ddp4.log | head -12
