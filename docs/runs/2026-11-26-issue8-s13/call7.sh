export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0; timeout 100 python docs/runs/2026-11-26-issue8-s13/inplace_check.py 2>&1 | grep -v "^kernels:\|^number"
