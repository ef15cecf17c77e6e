# Call 5 (nvidia-h100-x1, carry .devdata): train.py's graphed-step tests with the workspace moved into StepGraph;
# LLaMA's eager pair and Shakespeare-char compiled alone (launched from Python),
# the tree before (.devdata/head = 3a9efe8) and this one in turn on one machine.
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
TINY_SHAKESPEARE=$PWD/.devdata/input.txt timeout 200 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph and not ddp" 2>&1 | tail -1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null || exit 1
cp data/shakespeare_char/*.bin data/shakespeare_char/*.pkl .devdata/head/data/shakespeare_char/
for tree in head new; do
  dir=$PWD; [ $tree = head ] && dir=$PWD/.devdata/head
  (cd $dir && timeout 150 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --bench_dir=/tmp/l$tree \
     --variants="baseline eager,kernels eager") > $OUT/llama_$tree.txt 2>&1
  echo "llama $tree rc=$?"; grep -A3 "^Training step" $OUT/llama_$tree.txt | tail -2 | cut -c1-120
  for s in compiled; do
    extra="--cuda_graph=False"
    (cd $dir && timeout 140 python train.py config/train_shakespeare_char.py --max_iters=1000 --eval_interval=250 \
       --out_dir=/tmp/out_${s}_$tree $extra) > $OUT/char_${s}_$tree.log 2>&1
    echo "char $s $tree rc=$?"
  done
done
python - <<'PY'
import os, re, statistics
for n in ('compiled_head', 'compiled_new'):
    lines = open(f"{os.environ['OUT']}/char_{n}.log").read().splitlines()
    t = [float(m.group(2)) for m in (re.match(r'iter (\d+): loss [\d.]+, time ([\d.]+)ms', l) for l in lines) if m and int(m.group(1)) >= 100]
    print(n, len(t), 'median', statistics.median(t) if t else None, [l.strip() for l in lines if l.startswith('step 1000')])
PY
