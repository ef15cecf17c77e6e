# Call 3 (nvidia-h100-x1): is CUBLAS_WORKSPACE_CONFIG read once or per call in torch 2.11 (workspace_probe.py),
# starting without it and with it.
export PYTHONUNBUFFERED=1
python docs/runs/2026-11-26-issue8-s19/workspace_probe.py 2>&1 | grep -v Warning
CUBLAS_WORKSPACE_CONFIG=:0:0 CUBLASLT_WORKSPACE_SIZE=0 python docs/runs/2026-11-26-issue8-s19/workspace_probe.py 2>&1 | grep -v Warning
python -c "import torch, inspect; print(torch.__file__)"; grep -rn "orkspace" /opt/torch/.venv/lib/python3.12/site-packages/torch/cuda/__init__.py | head
