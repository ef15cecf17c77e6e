# device call 2 (nvidia-h100-x2): call 1 found that a graphed DDP run at 2 ranks trains to the end,
# then hangs in destroy_process_group (NCCL waits on the communicator the live graph holds,
# pytorch/pytorch#115388; at 1 rank last session it exited). train.py now frees the graph first
# (StepGraph.release). Again: scaling.sh 2 (its DDP run must end with rc=0) and the graphed DDP tests.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=.devdata/input.txt
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
timeout 240 python -m pytest -q tests/test_step_graph.py tests/test_train.py -k "ddp_replays or ddp_step_replayed" > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt
bash docs/runs/2026-11-24-issue8-s3/scaling.sh 2 > /dev/null
tail -3 $OUT/tests.txt; head -3 $OUT/scaling.txt; tail -1 $OUT/scaling.txt; grep -c "^iter" $OUT/scaling_ddp2.log
