"""Median ms per iteration over iterations 12-30 (after a DDP graph's 11 warm-up steps) and the
losses of each named run's log, $OUT/gpt2_<name>.log."""
import os
import re
import sys
import statistics

for name in sys.argv[1:]:
    text = open(os.path.join(os.environ['OUT'], f'gpt2_{name}.log')).read()
    it = {int(i): (float(l), float(t)) for i, l, t in re.findall(r"^iter (\d+): loss ([\d.]+), time ([\d.]+)ms", text, re.M)}
    late = [it[i][1] for i in it if i >= 12]
    print(name, 'median ms/iter (12-30):', statistics.median(late) if late else None,
          'loss@30:', it.get(30, (None,))[0], 'losses:', [round(it[i][0], 4) for i in sorted(it)])
