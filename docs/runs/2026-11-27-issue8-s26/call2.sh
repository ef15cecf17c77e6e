# call 2: the rates behind the floors table (floor_probe.py): HBM streaming, torch's fused AdamW (75 tensors and one
# flat one), cuBLAS at the step's product shapes, attention at GPT-2's shape by ours and each SDPA backend
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name,power.limit,clocks.max.sm --format=csv > $OUT/gpu.txt
timeout 400 python docs/runs/2026-11-27-issue8-s26/floor_probe.py > $OUT/floor.txt 2>&1; echo "rc $?" >> $OUT/floor.txt
cat $OUT/floor.txt
