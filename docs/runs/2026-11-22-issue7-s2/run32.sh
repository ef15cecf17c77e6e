#!/bin/bash
# issue 7, call 3: why the interpreter test fails here; bench.py --profile; --kernels for the norms
export PYTHONUNBUFFERED=1
CUDA_VISIBLE_DEVICES= TRITON_INTERPRET=1 python -c "
import torch, kernels
x = torch.randn(4, 64, requires_grad=True); w = torch.ones(64, requires_grad=True)
print(kernels.layer_norm(x, w, None, backend='triton').sum())" > $OUT/interp.txt 2>&1; tail -4 $OUT/interp.txt | cut -c1-400
/usr/bin/time -f "wall %e s" timeout 200 python bench.py --profile --out_dir=/tmp/prof > $OUT/profile_run.txt 2>&1; tail -3 $OUT/profile_run.txt; head -32 /tmp/prof/profile.txt | cut -c1-200
cp /tmp/prof/profile.txt $OUT/; gzip -c /tmp/prof/trace.json > $OUT/trace.json.gz; ls -la $OUT/trace.json.gz
/usr/bin/time -f "wall %e s" timeout 380 python bench.py --kernels "--kernel_ops=layer_norm,layer_norm + residual,rms_norm,rms_norm + residual" --out_dir=/tmp/kn > $OUT/kernels_norms.txt 2>&1; tail -45 $OUT/kernels_norms.txt | cut -c1-260
tar czf $OUT/kn.tgz -C /tmp kn
