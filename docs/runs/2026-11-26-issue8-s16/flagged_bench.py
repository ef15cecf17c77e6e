"""bench.py with one functorch partitioner flag changed for every compile in the process:
python flagged_bench.py <flag>=<True|False> [bench.py's arguments]. For measuring what a flag does
to the kernels variants before the model sets it for its own compiles only."""
import os
import runpy
import sys

import torch._functorch.config as functorch_config

flag, value = sys.argv[1].split('=')
setattr(functorch_config, flag, value == 'True')
print(f"functorch config: {flag} = {getattr(functorch_config, flag)}")
sys.argv = ['bench.py'] + sys.argv[2:]
sys.path.insert(0, os.getcwd())  # the repository root, as `python bench.py` would have it
runpy.run_path('bench.py', run_name='__main__')
