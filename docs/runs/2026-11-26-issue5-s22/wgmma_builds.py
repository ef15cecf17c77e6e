"""Call 2 had tests/test_attention.py::test_h100_build_keeps_wgmma_async fail for all ten builds on the GPU machine
(the subprocess exiting non-zero; the test's CalledProcessError does not show why). The same ten subprocesses, with
their exit codes and the ends of their stderr. $ python docs/runs/2026-11-26-issue5-s22/wgmma_builds.py"""
import os
import subprocess
import sys
sys.path.insert(0, os.getcwd())
sys.path.insert(0, os.path.join(os.getcwd(), "tests"))
from test_attention import BUILDS, KERNEL_OF_PASS, FA  # noqa: E402

for pass_, head_dim, causal, group in BUILDS:
    config = FA.CONFIGS[pass_][head_dim][0]
    args = [KERNEL_OF_PASS[pass_], *map(str, config), "--head-dim", str(head_dim), "--group", str(group)]
    p = subprocess.run([sys.executable, "tests/sm90_ptxas.py", *args] + ([] if causal else ["--not-causal"]),
                       capture_output=True, text=True)
    print(f"== {pass_} d{head_dim} causal={causal} gqa{group} config {config}: rc {p.returncode}")
    if p.returncode:
        print("   stderr: " + "\n   ".join(p.stderr.strip().splitlines()[-6:]))
    else:
        print("   " + " | ".join(line.strip() for line in p.stdout.splitlines() if "registers" in line or "serialized" in line))
