export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0; timeout 200 python docs/runs/2026-11-26-issue8-s13/graph_debug.py
