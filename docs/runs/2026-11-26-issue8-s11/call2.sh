# call 2: more grids (one program per tile, 2 per SM) and aux loaded early; GELU in a Triton matmul's epilogue vs cuBLAS + our GELU kernel (gemm_gelu_probe.py)
set -x
nvidia-smi --query-gpu=name,clocks.sm,power.draw,power.limit --format=csv
python docs/runs/2026-11-26-issue8-s11/gemm_gelu_probe.py 2>&1 | tee $OUT/probe2.txt
nvidia-smi --query-gpu=name,clocks.sm,power.draw,power.limit --format=csv
