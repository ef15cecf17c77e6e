"""
Triton kernels for GPT training, one op per module. Every op takes
backend='auto'|'triton'|'torch' (see kernels/backend.py) and has a PyTorch reference
`<op>_ref` that the tests, the benchmarks and the fallback all use. The package
imports without Triton and without a GPU; the ops then run their references.
unfused_cross_entropy is not an op: nanoGPT's LM head and loss, the model's PyTorch path.
"""
from kernels.backend import TRITON_AVAILABLE, INTERPRET, BACKENDS, device_tables
from kernels.norm import layer_norm, layer_norm_ref, rms_norm, rms_norm_ref
from kernels.rotary import rotary, rotary_ref, rotary_qkv, rotary_qkv_ref
from kernels.swiglu import swiglu, swiglu_ref, swiglu_backward, swiglu_backward_ref
from kernels.gelu import gelu, gelu_ref, gelu_backward, gelu_backward_ref
from kernels.gelu_mlp import gelu_mlp, gelu_mlp_ref, gelu_linear_fwd, dgelu_matmul
from kernels.attention import flash_attention, flash_attention_qkv, flash_attention_ref
from kernels.linear_cross_entropy import linear_cross_entropy, linear_cross_entropy_ref, unfused_cross_entropy
from kernels.rowwise_fp8 import rowwise_fp8, rowwise_fp8_ref
from kernels.newton_schulz import newton_schulz, newton_schulz_ref
from kernels.muon_update import muon_momentum, muon_momentum_ref, muon_apply, muon_apply_ref
from kernels.adamw import adamw, adamw_ref, adamw_state, AdamW
