# Call 8 (nvidia-h100-x1, carry .devdata): nanoGPT's own model against our baseline (after the fix), eager and compiled,
# time and peak memory as bench.py reads them (the memory target is read against our compiled baseline's peak).
export PYTHONUNBUFFERED=1
python docs/runs/2026-11-26-issue5-s7/eager_baselines.py > $OUT/eager.txt 2>&1; echo "eager rc=$?"; grep "^round\|GPU busy" $OUT/eager.txt
python docs/runs/2026-11-26-issue5-s7/eager_baselines.py compiled > $OUT/compiled.txt 2>&1; echo "compiled rc=$?"; grep "^round" $OUT/compiled.txt
