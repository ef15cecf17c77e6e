# device call 6 (H100): the last checks
# 1. train.py's refusal of recompute + dropout graphed, and a graphed run through train.py as changed
#    (the recompute key passed to the model)
# 2. scaling.sh at N=1 again, its two logs now apart (the script for the 4-GPU point, run end to end)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=.devdata/input.txt
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
timeout 200 python -m pytest -q tests/test_train.py -k "refuses or (a_step_replayed and False)" > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt
bash docs/runs/2026-11-24-issue8-s3/scaling.sh 1 > /dev/null
tail -3 $OUT/tests.txt; head -3 $OUT/scaling.txt; tail -1 $OUT/scaling.txt
