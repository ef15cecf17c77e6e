"""bench.py with the block matrices' bf16 copies written by kernels.AdamW and read by their products (copies_patch),
the weight gradients in fp32 out of the products. A prototype for the step's time: a check first, then bench.py with
the given arguments. Run from the repo root."""
import os
import runpy
import sys
import types

import torch.nn.functional as F

sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import model  # noqa: E402
from copies_patch import add_copies, check, linear  # noqa: E402

check()
model.F = types.SimpleNamespace(**{k: getattr(F, k) for k in dir(F) if not k.startswith("__")})
model.F.linear = linear
configure = model.GPT.configure_optimizers


def configure_with_copies(self, *args, **kwargs):
    add_copies(self)
    return configure(self, *args, **kwargs)


model.GPT.configure_optimizers = configure_with_copies
sys.argv = ["bench.py"] + sys.argv[1:]
runpy.run_path("bench.py", run_name="__main__")
