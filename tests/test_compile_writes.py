"""
Under torch.compile, Inductor clones every tensor a user Triton kernel writes (by its
analysis of the kernel's TTIR) and copies it back after the launch. An input taken for
an output costs two extra passes over it per call: the GELU kernels once read x through
a helper that also made the store's address, and Inductor took x for written (its
copies took about twice the kernels' time at GPT-2's MLP shape: docs/perf-notes.md).
Each kernel must be seen to write its outputs and nothing else.
"""
import os
import sys
import json
import subprocess

# every launch of every launcher (tests/inductor_writes.py): the tensor arguments written
WRITES = {
    "_norm_fwd_kernel": ["H", "Stats", "Y"],
    "_norm_bwd_kernel": ["DH", "DWB"],
    "_gelu_fwd_kernel": ["Y"],
    "_gelu_bwd_kernel": ["DBias", "DX", "Y"],
    "_swiglu_fwd_kernel": ["Y"],
    "_swiglu_bwd_kernel": ["DX", "Y"],
    "_rotary_kernel": ["Y"],
    "_flash_attention_fwd_kernel": ["LSE", "O"],
    "_flash_attention_bwd_dq_kernel": ["DELTA", "DQ"],
    "_flash_attention_bwd_dkdv_kernel": ["DKV"],
    "_linear_cross_entropy_fwd_kernel": ["LOGITS", "LOSS"],
    "_linear_cross_entropy_bwd_kernel": ["OUT"],
    "_rowwise_fp8_kernel": ["S", "X8"],
}


def test_inductor_sees_each_kernel_write_only_its_outputs():
    script = os.path.join(os.path.dirname(__file__), "inductor_writes.py")
    p = subprocess.run([sys.executable, script], capture_output=True, text=True)
    # the analysis falls back to "every argument written" on an error, which it logs to stderr
    assert p.returncode == 0, p.stderr[-3000:]
    report = json.loads(p.stdout.strip().splitlines()[-1])
    assert report["modules"] == ["attention", "gelu", "linear_cross_entropy", "norm", "rotary", "rowwise_fp8",
                                 "swiglu"]
    assert report["writes"] == WRITES, p.stderr[-3000:]
    assert all(not names for names in report["inputs_written"].values()), report["inputs_written"]
