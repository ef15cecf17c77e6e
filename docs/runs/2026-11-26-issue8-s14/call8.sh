# Call 8 (nvidia-h100-x1): adamw_probe.py's Triton kernel over tile sizes and warps (call 7: 4096 x 4 warps, 2.45 TB/s).
export PYTHONUNBUFFERED=1
for cfg in "1024 4" "2048 4" "2048 8" "8192 8" "16384 16"; do
  timeout 60 python docs/runs/2026-11-26-issue8-s14/adamw_probe.py $cfg > "$OUT/adamw_probe_${cfg/ /x}.txt" 2>&1
  echo "== $cfg rc=$?"; grep -E "^  (torch\+cast|triton )" "$OUT/adamw_probe_${cfg/ /x}.txt"
done
