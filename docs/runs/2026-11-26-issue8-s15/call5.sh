# Call 5 (nvidia-h100-x1, carry .devdata): call 4's machine ran the graphed steps slower than call 3's with the same
# setting (23.47 against 23.08 ms compiled): bench.py's new default against --cublas_workspace=True, in turn, twice.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
V="kernels eager graphed,kernels compiled graphed"
for round in 1 2; do
  for ws in False True; do
    timeout 140 python bench.py --autocast_residual=True --cublas_workspace=$ws --variants="$V" --bench_dir=/tmp/b_$ws$round > /tmp/b_$ws$round.txt 2>&1
    echo "== workspace=$ws $round rc=$?"; grep -A3 "^Training step" /tmp/b_$ws$round.txt | tail -2 | cut -c1-75
  done
done
