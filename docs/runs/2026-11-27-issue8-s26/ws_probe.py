"""bench.py with the matmul plans' workspace limited (PLAN_WS=all: no plan may ask cuBLASLt for one; PLAN_WS=epilogue:
only the GELU_AUX and DGELU products; unset: as kernels/matmul.py has it). Run from the repo root:
PLAN_WS=epilogue python docs/runs/2026-11-27-issue8-s26/ws_probe.py --variants=...  (bench.py's own arguments)."""
import os
import runpy
import sys

sys.path.insert(0, os.getcwd())
import kernels.matmul as matmul  # noqa: E402

mode = os.environ.get("PLAN_WS", "default")
if mode != "default":
    init = matmul._LtPlan.__init__

    def limited(self, lib, a, b, out, beta, epilogue=None, aux=None):
        saved = matmul.MAX_WORKSPACE
        if mode == "all" or epilogue:
            matmul.MAX_WORKSPACE = 0  # read by __init__ when it asks the heuristic
        try:
            init(self, lib, a, b, out, beta, epilogue, aux)
        finally:
            matmul.MAX_WORKSPACE = saved
    matmul._LtPlan.__init__ = limited
print(f"ws_probe: PLAN_WS={mode}")
sys.argv = ["bench.py"] + sys.argv[1:]
runpy.run_path("bench.py", run_name="__main__")
