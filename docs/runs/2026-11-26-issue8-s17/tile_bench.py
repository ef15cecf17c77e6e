"""bench.py with GELU's backward tile set first: `python tile_bench.py M N WARPS [bench.py's arguments]` (the A/B of
the backward's tile in one process setting, without editing kernels/gelu.py)."""
import os
import runpy
import sys

root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
sys.path.insert(0, root)
import kernels  # noqa: E402,F401

sys.modules['kernels.gelu'].TILE['bwd'] = tuple(int(v) for v in sys.argv[1:4])
print('GELU backward tile', sys.modules['kernels.gelu'].TILE['bwd'])
sys.argv = [os.path.join(root, 'bench.py')] + sys.argv[4:]
runpy.run_path(sys.argv[0], run_name='__main__')
