# Call 3 (nvidia-h100-x1, carry .devdata): nanoGPT's own model against ours with PyTorch's ops, eager: time and profile.
export PYTHONUNBUFFERED=1
python docs/runs/2026-11-26-issue5-s7/eager_baselines.py > $OUT/eager_baselines.txt 2>&1; echo "rc=$?"
cat $OUT/eager_baselines.txt
