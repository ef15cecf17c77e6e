# Tenth session, call 3 (nvidia-h100-x1, carry .devdata): model.compile_model (combo kernels) on CUDA: the new
# model test and train.py's compiled / graphed tests; then GPT-2's six variants with the kernels variants compiled by it.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
timeout 330 python -m pytest tests/test_model.py tests/test_train.py -q -x -k "compile_model or cuda_graphs_train or (resumes and True)" > $OUT/tests.txt 2>&1
echo "[rc=$?]" >> $OUT/tests.txt; tail -3 $OUT/tests.txt; grep -E "^FAILED|^ERROR" $OUT/tests.txt | head
timeout 250 python bench.py --autocast_residual=True --bench_dir=$OUT/bench_gpt2 > $OUT/gpt2.txt 2>&1
echo "== gpt2 rc=$?"; grep -E "^ *(baseline|kernels) (eager|compiled)|Triton for|losses agree|rror" $OUT/gpt2.txt | cut -c1-170
