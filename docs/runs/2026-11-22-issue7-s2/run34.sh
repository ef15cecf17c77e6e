#!/bin/bash
# issue 7, call 5: bench.py --kernels, every op, with the plots
export PYTHONUNBUFFERED=1
pip install -q --no-deps .whl/liger_kernel-0.8.5-py3-none-any.whl > /dev/null 2>&1
/usr/bin/time -f "wall %e s" timeout 570 python bench.py --kernels --out_dir=/tmp/ks > $OUT/kernels.txt 2>&1; grep -E "rror|wall|wrote" $OUT/kernels.txt | grep -v UserWarning | tail -12 | cut -c1-200
tar czf $OUT/ks.tgz -C /tmp ks
