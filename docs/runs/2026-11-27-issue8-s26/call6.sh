# call 6: the final tree's CUDA tests of what changed (kernels.adamw and kernels.AdamW, Muon's AdamW groups, the shared
# device tables and lerp, StepGraph holding the tables; train.py's graphed, resumed and Muon runs with them), and the
# final kernel (1024 a program, lerp for exp_avg) against torch's fused AdamW once more
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
D=docs/runs/2026-11-27-issue8-s26
timeout 90 python $D/adamw_probe.py 1024x1x4 > $OUT/adamw_probe.txt 2>&1; echo "rc $?" >> $OUT/adamw_probe.txt; cat $OUT/adamw_probe.txt
timeout 200 python -m pytest -q tests/test_adamw.py tests/test_muon.py tests/test_muon_update.py tests/test_step_graph.py \
  > $OUT/tests.txt 2>&1; echo "tests rc $?" >> $OUT/tests.txt; tail -3 $OUT/tests.txt
timeout 200 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph_trains_and_resumes or falls or resume_continues or muon_trains" \
  > $OUT/tests_train.txt 2>&1; echo "tests rc $?" >> $OUT/tests_train.txt; tail -3 $OUT/tests_train.txt
timeout 150 python -m pytest -q tests/test_model.py -k "bf16_training_step_kernels_on_and_off_agree" \
  > $OUT/tests_model.txt 2>&1; echo "tests rc $?" >> $OUT/tests_model.txt; tail -3 $OUT/tests_model.txt
