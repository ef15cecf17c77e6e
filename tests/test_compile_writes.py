"""
Under torch.compile, Inductor clones every tensor a user Triton kernel writes (by its
analysis of the kernel's TTIR) and copies it back after the launch. An input taken for
an output costs two extra passes over it per call: the GELU kernels once read x through
a helper that also made the store's address, and Inductor took x for written (255 us
of copies around 138 us of kernels per compiled forward+backward at GPT-2's MLP shape,
H100). Each kernel must be seen to write its outputs and nothing else.
"""
import os
import sys
import json
import subprocess

# every launch of every launcher (tests/inductor_writes.py): the tensor arguments written
WRITES = {
    "_norm_fwd_kernel": ["H", "Mean", "Rstd", "Y"],
    "_norm_bwd_kernel": ["DB", "DH", "DW"],
    "_gelu_fwd_kernel": ["Y"],
    "_gelu_bwd_kernel": ["DBias", "DX"],
    "_swiglu_fwd_kernel": ["Y"],
    "_swiglu_bwd_kernel": ["DA", "DB"],
    "_rotary_kernel": ["Y"],
    "_flash_attention_fwd_kernel": ["LSE", "O"],
    "_flash_attention_bwd_dq_kernel": ["DELTA", "DQ"],
    "_flash_attention_bwd_dkdv_kernel": ["DKV"],
    "_linear_cross_entropy_fwd_kernel": ["LOGITS", "LOSS"],
    "_linear_cross_entropy_bwd_kernel": ["OUT"],
}


def test_inductor_sees_each_kernel_write_only_its_outputs():
    script = os.path.join(os.path.dirname(__file__), "inductor_writes.py")
    out = subprocess.run([sys.executable, script], capture_output=True, text=True, check=True).stdout
    assert json.loads(out.strip().splitlines()[-1]) == WRITES
