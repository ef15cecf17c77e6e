"""The three-way rule at one row (1 x 16 x 1000, fp32, CPU): how often a product summed in another order ((g W) 1.7
against (1.7 g) W, the same arithmetic otherwise) exceeds twice the other's largest error by chance. Run on the CPU machine:
$ python docs/runs/2026-11-26-issue5-s23/one_row_noise.py   (printed: medians 5.75e-7 / 5.50e-7 / 5.62e-7, fraction 0.087)"""
import torch
torch.manual_seed(0)
r1=[];r2=[];r3=[]
for s in range(300):
    x = torch.randn(1,16); w = torch.randn(1000,16)*0.25; t = torch.randint(0,1000,(1,))
    z = x@w.T
    g = torch.softmax(z,-1); g[0,t[0]] -= 1
    zd = x.double()@w.double().T; p = torch.softmax(zd,-1); p[0,t[0]] -= 1
    ref = 1.7*(p@w.double())
    a = ((g@w)*1.7).double(); b = ((1.7*g)@w).double()
    z32 = z.clone().requires_grad_(); l = torch.nn.functional.cross_entropy(z32, t, reduction='sum')*1.7
    dz, = torch.autograd.grad(l, z32); c = (dz@w).double()
    r1.append((a-ref).abs().max().item()); r2.append((b-ref).abs().max().item()); r3.append((c-ref).abs().max().item())
import statistics as st
print('ours (g@W)*1.7 median', st.median(r1), 'torch-like (1.7g)@W', st.median(r2), 'autograd dz@W', st.median(r3))
print('fraction ours > 2*autograd + eps*max', sum(a > 2*c + 1.2e-7*0.9 for a,c in zip(r1,r3))/len(r1))
