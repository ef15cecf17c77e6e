# call 6: the step graph's tests on CUDA with gelu_mlp's copies and the lean cuBLASLt launch
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0; timeout 170 python -m pytest -q -x tests/test_step_graph.py -rs > $OUT/step_graph_tests.txt 2>&1; echo "rc $?" >> $OUT/step_graph_tests.txt; tail -6 $OUT/step_graph_tests.txt
