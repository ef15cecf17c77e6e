"""bench.py with model.py's F.linear replaced by one whose weight gradient comes out of its product in the weight's
dtype (torch.mm's out_dtype: fp32 sums written as fp32) instead of in bf16 and cast back by a pass of its own, under
autocast on CUDA for weights stored wider than the product. A prototype for the step's time: first a check of its
gradients against F.linear's under autocast, then bench.py with the given arguments. Run from the repo root."""
import os
import runpy
import sys
import types

import torch.nn.functional as F

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402
from wgrad_patch import check, linear  # noqa: E402

check()
model.F = types.SimpleNamespace(**{k: getattr(F, k) for k in dir(F) if not k.startswith("__")})
model.F.linear = linear
sys.argv = ["bench.py"] + sys.argv[1:]
runpy.run_path("bench.py", run_name="__main__")
