# call 2: kernels/embedding.py on CUDA: its tests, the model's tests that run it, its tiles timed alone (emb_probe.py),
# then the tanh graphed step's profile with it (Triton's embedding forced on: is the head's gradient copied around it?)
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
t0=$(date +%s)
timeout 240 python -m pytest -q tests/test_embedding.py tests/test_compile_writes.py tests/test_model.py \
  -k "embedding or compile_writes or kernels_on_and_off or compile_model_gives or bf16_training_step" > $OUT/tests.txt 2>&1
echo "tests rc $? $(tail -1 $OUT/tests.txt) t=$(( $(date +%s) - t0 ))"
timeout 120 python docs/runs/2026-11-27-issue8-s31/emb_probe.py > $OUT/emb_probe.txt 2>&1
echo "probe rc $?"; cat $OUT/emb_probe.txt; echo "t=$(( $(date +%s) - t0 ))"
TORCH_LOGS=output_code timeout 200 python bench.py --autocast_residual=True --gelu_approximate=tanh --profile \
  --profile_variant="kernels compiled graphed" --variants="kernels compiled graphed" --use_triton_embedding=True \
  --bench_dir=/tmp/prof > $OUT/prof.txt 2> $OUT/output_code.log
echo "prof rc $? t=$(( $(date +%s) - t0 ))"
grep "^kernels:\|GPU busy" $OUT/prof.txt
python docs/runs/2026-11-27-issue8-s31/trace_kernels.py /tmp/prof/trace.json 3 > $OUT/trace_kernels.txt 2>&1
head -40 $OUT/trace_kernels.txt | cut -c1-110
grep -n "embedding" $OUT/output_code.log | grep -v "inductor_meta\|triton_meta" | head -20
gzip $OUT/output_code.log
