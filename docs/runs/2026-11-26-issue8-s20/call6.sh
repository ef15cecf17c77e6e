# Call 6 (nvidia-h100-x1, carry .devdata): the Shakespeare-char config's four settings in one call, as the eighteenth
# session's call 8 ran them, now that steps launched from Python keep cuBLAS's default workspace (nineteenth session):
# the config (compiled, graphed), reduce-overhead, compiled alone, the config with every op in PyTorch; 1000 iterations
# each, one after the other.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
char() {  # $1: a name, then overrides
  name=$1; shift
  timeout 140 python train.py config/train_shakespeare_char.py --max_iters=1000 --eval_interval=250 \
    --out_dir=/tmp/out_$name "$@" > $OUT/char_$name.log 2>&1
  echo "$name rc=$?"
}
char graphed
char ro --cuda_graph=False --compile_mode=reduce-overhead
char compiled --cuda_graph=False
char torch --kernels=torch
python - <<'PY'
import os, re, statistics
for n in ('graphed', 'ro', 'compiled', 'torch'):
    t = [float(m.group(2)) for m in (re.match(r'iter (\d+): loss [\d.]+, time ([\d.]+)ms', l) for l in open(f"{os.environ['OUT']}/char_{n}.log")) if m and int(m.group(1)) >= 100]
    v = [l.strip() for l in open(f"{os.environ['OUT']}/char_{n}.log") if l.startswith('step 1000')]
    print(n, len(t), 'median', statistics.median(t) if t else None, v)
PY
