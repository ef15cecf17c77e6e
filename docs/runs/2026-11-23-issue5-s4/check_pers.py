import sys; sys.path.insert(0, '.')
from sm90_report import report
import variants as v
for bv, bh, bk, w, s in [(128, 256, 64, 8, 3), (128, 128, 64, 8, 4), (128, 256, 64, 8, 4)]:
    for ws in (False, True):
      for fl in (False, True):
        sig = dict(g_desc="tensordesc<bf16[%d,%d]>" % (bk, bv), x_desc="tensordesc<bf16[%d,%d]>" % (bk, bh),
                   dw_desc="tensordesc<fp32[%d,%d]>" % (bv, bh), V="i32", C="i32", H="i32")
        try:
            r = report(v.dweight_persistent_kernel, sig, dict(ACCUMULATE=True, BLOCK_V=bv, BLOCK_H=bh, BLOCK_K=bk, NUM_SMS=132, WS=ws, FLATTEN=fl), w, s)
            print("pers", bv, bh, bk, w, s, ws, fl, [l.strip() for l in r.splitlines() if 'registers' in l or 'spill' in l])
        except Exception as e:
            print("pers", bv, bh, bk, w, s, ws, fl, "FAILED", str(e).replace('\n', ' ')[-300:])
