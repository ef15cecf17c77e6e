# Issue 6, session 5: CPU simulation (bf16 operands, fp32 products rounded once, as the gram kernel) of Newton-Schulz
# with steps grouped in Gram space, max error against the float64 iteration; `python groupings_cpu.py 3072 2304`
# (the 3072 run had groupings (1,1,1,1,1), (2,2,1), (1,2,2), (2,1,2), (2,3), (3,2), (5,); the 2304 run the first two, (3,2), (3,1,1))
import torch, itertools, sys
torch.manual_seed(0)
a, b, c = (3.4445, -4.7750, 2.0315)
bf = lambda t: t.to(torch.bfloat16)
def prod(X, Y, alpha=1.0, C=None, beta=0.0, gamma=0.0):
    """gram kernel: fp32 product of bf16 operands, epilogue in fp32, rounded once; lower triangle mirrored"""
    out = alpha * (X.float() @ Y.float().mT)
    if C is not None: out = out + beta * C.float()
    out = out + gamma * torch.eye(X.shape[-2])
    out = bf(out)
    low = torch.tril(out)
    return low + torch.tril(out, -1).mT
def group_step(X, g):
    A = prod(X, X)
    Q = None
    for i in range(g):
        P = prod(A, A, c, A, b, a)
        Q = P if Q is None else prod(P, Q)
        if i < g - 1:
            A = prod(prod(P, P), A)
    return bf(Q.float() @ X.float())
def ns(G, grouping):
    X = bf(G / (G.norm(dim=(-2, -1), keepdim=True) + 1e-7))
    for g in grouping:
        X = group_step(X, g)
    return X
def ref64(G, steps=5):
    X = G.double() / (G.double().norm(dim=(-2, -1), keepdim=True) + 1e-7)
    for _ in range(steps):
        A = X @ X.mT
        X = a * X + (b * A + c * A @ A) @ X
    return X
def torch_bf16(G, steps=5):
    X = bf(G / (G.norm(dim=(-2, -1), keepdim=True) + 1e-7))
    for _ in range(steps):
        A = X @ X.mT
        B = b * A + c * A @ A
        X = a * X + B @ X
    return X
def spectrum(kind, B, m, n):
    U = torch.linalg.qr(torch.randn(B, m, m))[0]
    V = torch.linalg.qr(torch.randn(B, n, m))[0]
    if kind == 'gauss':
        return torch.randn(B, m, n)
    if kind == 'logspread':
        s = 10 ** (-4 * torch.rand(B, m))
    elif kind == 'lowrank':
        s = torch.full((B, m), 1e-3); s[:, :16] = 1.0
    elif kind == 'harmonic':
        s = 1.0 / torch.arange(1, m + 1).float().expand(B, m)
    return (U * s[:, None, :]) @ V.mT
m = 768
groupings = [(1, 1, 1, 1, 1), (2, 2, 1), (3, 2), (3, 1, 1)]
for n in (int(x) for x in sys.argv[1:]):
    for kind in ('gauss', 'logspread', 'lowrank', 'harmonic'):
        G = spectrum(kind, 2, m, n)
        r = ref64(G)
        et = (torch_bf16(G).double() - r).abs().max().item()
        errs = {gr: (ns(G, gr).double() - r).abs().max().item() for gr in groupings}
        print(f"{m}x{n} {kind:9s} torch bf16 {et:.2e}; " + "; ".join(f"{''.join(map(str, gr))} {e:.2e}" for gr, e in errs.items()), flush=True)
