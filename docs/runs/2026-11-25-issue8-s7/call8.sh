# Call 8 (nvidia-h100-x1): what a Python autograd node costs the host in an eager backward, CUDA against CPU tensors.
timeout 200 python docs/runs/2026-11-25-issue8-s7/py_nodes.py > $OUT/py_nodes.txt 2>&1; echo "[rc=$?]" >> $OUT/py_nodes.txt
