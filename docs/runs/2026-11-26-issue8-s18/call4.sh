# Call 4 (nvidia-h100-x1, carry .devdata): compile_model without combo kernels where a checkpointed region is
# recomputed ('mlp', 'block'). Call 3's peak of LLaMA's compiled 'mlp' step held 8 layers' recomputed c_fc outputs
# at once, early in the backward; prediction: the compiled graphed step near the eager graphed one's 3,168 MiB, and
# +0.05-0.2 ms (LLaMA's combo gain, tenth session). This tree against the one before it (.devdata/head), in turn.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
python -c "import torch._inductor.config as c; print('torch 2.11 combo settings:', [k for k in dir(c) if 'combo' in k])"
timeout 200 python docs/runs/2026-11-26-issue8-s18/peak.py arch=llama compiled=1 recompute=mlp out=$OUT/peak_llama_mlp_nocombo.txt > $OUT/peak_log.txt 2>&1; echo "peak rc=$?"
head -3 $OUT/peak_llama_mlp_nocombo.txt | cut -c1-200
B="--arch=llama --n_kv_head=4 --autocast_residual=True --recompute=mlp --bench_dir=/tmp/b"
timeout 200 python bench.py $B --variants="baseline compiled,kernels compiled graphed" > $OUT/bench_new.txt 2>&1; echo "new rc=$?"
(cd .devdata/head && timeout 150 python bench.py $B --variants="kernels compiled graphed" > $OUT/bench_old.txt 2>&1; echo "old rc=$?")
for f in new old; do grep -A4 "^Training step" $OUT/bench_$f.txt | tail -2 | cut -c1-160; done
timeout 100 python -m pytest -q tests/test_model.py -k "compile_model" 2>&1 | tail -1
