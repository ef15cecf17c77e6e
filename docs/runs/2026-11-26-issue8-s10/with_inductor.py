"""Runs a script under torch._inductor.config settings given first, e.g.
$ python docs/runs/2026-11-26-issue8-s10/with_inductor.py combo_kernels=1,coordinate_descent_tuning=1 bench.py --variants=...
An experiment's wrapper: the settings are not (yet) options of bench.py or train.py."""
import os
import sys
import runpy
import torch._inductor.config as inductor_config

settings, script, *args = sys.argv[1:]
for item in filter(None, settings.split(',')):
    name, value = item.split('=')
    setattr(inductor_config, name, type(getattr(inductor_config, name))(int(value)))
    print(f"inductor: {name} = {getattr(inductor_config, name)}")
sys.argv = [script, *args]
sys.path[0] = os.path.dirname(os.path.abspath(script))  # the script's imports, as if run directly
runpy.run_path(script, run_name='__main__')
