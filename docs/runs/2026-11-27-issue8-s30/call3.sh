# call 3: host_probe.py (host time of kernels.matmul and kernels.gelu_mlp per call, and a cProfile of gelu_mlp)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
nvidia-smi --query-gpu=name --format=csv,noheader; timeout 200 python docs/runs/2026-11-27-issue8-s30/host_probe.py > $OUT/host_probe.txt 2>&1; echo rc $?; head -60 $OUT/host_probe.txt
