#!/bin/bash
# issue 7, call 10: python bench.py (donated buffers back on for the training steps); --kernels for one op (compiled backward alone)
export PYTHONUNBUFFERED=1
/usr/bin/time -f "wall %e s" timeout 330 python bench.py --out_dir=$OUT/e2e > $OUT/bench.txt 2>&1; grep -vE "^number of|^AdamW lr" $OUT/bench.txt | grep -E "^  [a-z_]+: |^kernels:|ms/iter|variant|eager|compiled|agree|wall" | cut -c1-250
timeout 150 python bench.py --kernels --kernel_ops=layer_norm --out_dir=/tmp/kl > $OUT/kernels_ln.txt 2>&1; grep -E "rror|^\[1/|^ +(fwd|bwd|fwdbwd) " $OUT/kernels_ln.txt | head -8 | cut -c1-250
cp kernels_cache.json $OUT/
