# call 2: the LM head's chunk products in fp8 against the bf16 plans (fp8_head_probe.py)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 300 python docs/runs/2026-11-27-issue8-s25/fp8_head_probe.py > $OUT/probe.txt 2>&1; echo "probe rc $?" >> $OUT/probe.txt
cat $OUT/probe.txt
