# call 10: the MLP's host time, PyTorch's against gelu_mlp (host_probe.py), and where ours goes (cProfile)
export PYTHONUNBUFFERED=1
timeout 150 python docs/runs/2026-11-26-issue8-s24/host_probe.py > $OUT/host.txt 2>&1; echo "rc $?" >> $OUT/host.txt
head -60 $OUT/host.txt
