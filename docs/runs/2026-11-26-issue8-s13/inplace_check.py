"""Does autograd add the embedding's sparse rows into the fused loss's weight gradient in place on CUDA?
(call 7; the CPU shows an out-of-place aten::add, perhaps Triton's interpreter's doing). One eager backward of a
small GPT, profiled: the adds on the tied matrix's shape."""
import os, sys
sys.path.insert(0, os.getcwd())
import torch
from model import GPT, GPTConfig
DEV = "cuda" if torch.cuda.is_available() else "cpu"
cfg = GPTConfig(block_size=64, vocab_size=512, n_layer=1, n_head=2, n_embd=64, bias=False)
for sparse in (False, True):
    torch.manual_seed(0)
    model = GPT(cfg, kernels='triton', sparse_embedding_grad=sparse).to(DEV)
    idx, targets = (torch.randint(cfg.vocab_size, (2, 64), device=DEV) for _ in range(2))
    for _ in range(2):
        with torch.autocast(DEV, dtype=torch.bfloat16):
            _, loss = model(idx, targets)
        with torch.profiler.profile(record_shapes=True) as prof:
            loss.backward()
        model.zero_grad(set_to_none=True)
    adds = [(e.name, e.input_shapes[:2]) for e in prof.events()
            if e.name in ('aten::add', 'aten::add_', 'aten::index_add_', 'aten::copy_') and e.input_shapes and e.input_shapes[0] == [cfg.vocab_size, cfg.n_embd]]
    print('sparse' if sparse else 'dense', adds, flush=True)
