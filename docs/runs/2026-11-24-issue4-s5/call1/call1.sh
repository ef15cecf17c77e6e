# device call 1: warp-specialized kernels against ours and SDPA at 4x16x4096x128, each phase in
# its own process under a timeout (run 0 of this experiment hung with no output at all).
D=docs/runs/2026-11-24-issue4-s5
nvidia-smi --query-gpu=name,clocks.sm,power.draw --format=csv > $OUT/gpu.txt
timeout 60 python -u -c "import torch, triton; print(torch.__version__, triton.__version__, torch.cuda.get_device_name())" > $OUT/exp_ws.txt 2>&1
for ph in wsfwd wsdkdv ours; do
  timeout 170 python -u $D/exp_ws.py $ph 4 16 4096 128 >> $OUT/exp_ws.txt 2>&1
  echo "[$ph rc=$?]" >> $OUT/exp_ws.txt
done
