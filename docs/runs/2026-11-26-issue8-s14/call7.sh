# Call 7 (nvidia-h100-x1): adamw_probe.py, AdamW with the matrices' bf16 copies written in its pass against torch's
# fused AdamW plus a separate cast.
export PYTHONUNBUFFERED=1
timeout 200 python docs/runs/2026-11-26-issue8-s14/adamw_probe.py > $OUT/adamw_probe.txt 2>&1
echo "== probe rc=$?"; cat $OUT/adamw_probe.txt | tail -8
