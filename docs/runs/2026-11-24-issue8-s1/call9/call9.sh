# device call 9: where an eager Triton op's host time goes (LayerNorm with residual, attention)
timeout 200 python -u docs/runs/2026-11-24-issue8-s1/host_profile.py > $OUT/host_profile.txt 2>&1
echo "[rc=$?]" >> $OUT/host_profile.txt
