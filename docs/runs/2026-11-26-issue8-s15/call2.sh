# Call 2 (nvidia-h100-x1, carry .devdata): the memsets before cuBLAS's cooperative kernels (call 1: the gaps after
# "torch" kernels before cuBLAS ones, 152 us of the compiled graphed step's 381 us of idle): cuBLAS without its
# workspace (CUBLAS_WORKSPACE_CONFIG=:0:0, so no kernel that needs zeroed semaphores) against the default, in turn,
# twice, with gaps.py on a profile of each; and the wgmma test that failed on this image in earlier sessions.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
R=docs/runs/2026-11-26-issue8-s15
timeout 120 python -m pytest -q tests/test_attention.py -k wgmma_async > /tmp/wgmma.txt 2>&1
echo "== wgmma tests rc=$?"; tail -30 /tmp/wgmma.txt | cut -c1-300
for ws in default none; do
  unset CUBLAS_WORKSPACE_CONFIG; [ $ws = none ] && export CUBLAS_WORKSPACE_CONFIG=:0:0
  d=/tmp/prof_$ws
  timeout 100 python bench.py --autocast_residual=True --profile --profile_steps=5 --profile_variant="kernels compiled graphed" --bench_dir=$d > $d.txt 2>&1
  echo "== profile $ws rc=$?"; head -1 $d/profile.txt; python $R/gaps.py $d/trace.json 5; grep -E "nvjet|Memset" $d/profile.txt | head -12 | cut -c1-100
done
for round in 1 2; do
  for ws in default none; do
    unset CUBLAS_WORKSPACE_CONFIG; [ $ws = none ] && export CUBLAS_WORKSPACE_CONFIG=:0:0
    timeout 100 python bench.py --autocast_residual=True --variants="kernels compiled graphed" --bench_dir=/tmp/b_$ws$round > /tmp/b_$ws$round.txt 2>&1
    echo "== $ws $round rc=$?"; grep -A2 "^Training step" /tmp/b_$ws$round.txt | tail -1 | cut -c1-75
  done
done
