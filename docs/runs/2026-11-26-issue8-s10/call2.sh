# Tenth session, call 2 (nvidia-h100-x1, carry .devdata): combo kernels on LLaMA; combo with Inductor's epilogue
# fusion into user Triton kernels, and with aggressive fusion; profiles of the compiled kernels step without and with combo.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
W=docs/runs/2026-11-26-issue8-s10/with_inductor.py
V="baseline compiled,kernels compiled graphed"
show() { grep -E "^ *(baseline|kernels) (eager|compiled)|losses agree|Error|error" $1 | cut -c1-170; }
i=0
for cfg in none combo_kernels=1; do
  i=$((i+1)); s=${cfg/none/}
  timeout 170 python $W "$s" bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --variants="$V" --bench_dir=$OUT/llama$i > $OUT/llama$i.txt 2>&1
  echo "== llama $i $cfg rc=$?"; show $OUT/llama$i.txt
done
for cfg in combo_kernels=1,epilogue_fusion_user_defined_triton_kernel=1 combo_kernels=1,aggressive_fusion=1; do
  i=$((i+1))
  timeout 170 python $W "$cfg" bench.py --autocast_residual=True --variants="$V" --bench_dir=$OUT/b$i > $OUT/run$i.txt 2>&1
  echo "== gpt2 $i $cfg rc=$?"; show $OUT/run$i.txt
done
for cfg in none combo_kernels=1; do
  i=$((i+1)); s=${cfg/none/}
  timeout 120 python $W "$s" bench.py --autocast_residual=True --profile --profile_variant="kernels compiled graphed" --bench_dir=$OUT/prof$i > $OUT/prof$i.txt 2>&1
  echo "== profile $i $cfg rc=$?"; grep -E "ms per step" $OUT/prof$i.txt | cut -c1-170
done
rm -f $OUT/*/trace.json
