"""train.py with torch._dynamo.config.optimize_ddp = False: Dynamo compiles the DDP model as one
graph instead of one per gradient bucket (DDP's all-reduces then start after the backward)."""
import os
import sys
import runpy

import torch._dynamo

torch._dynamo.config.optimize_ddp = False
sys.argv = ['train.py', *sys.argv[1:]]
sys.path.insert(0, os.getcwd())  # the repo's root, where train.py imports from
runpy.run_path('train.py', run_name='__main__')
