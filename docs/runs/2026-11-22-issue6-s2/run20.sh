#!/bin/bash
# issue 6, call 3: finer sweep of N around the crossings (eval at the end only), then the optimizer alone on an idle GPU
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name --format=csv,noheader
python data/shakespeare_char/prepare.py .devdata/input.txt > /tmp/prepare.txt 2>&1 || cat /tmp/prepare.txt
mkdir -p /tmp/logs
C="config/train_shakespeare_char.py --log_interval=100"
go() { name=$1; n=$2; shift 2; timeout 400 python train.py $C --out_dir=/tmp/o_$name --max_iters=$n --lr_decay_iters=$n --eval_interval=$n "$@" > /tmp/logs/$name.log 2>&1 & }
for n in 1550 1600 1650 1700; do go adamw_$n $n; done
for n in 1050 1100 1150 1200; do go muon_$n $n --optimizer=muon; done
go muon_1100_seed2 1100 --optimizer=muon --seed=2
go adamw_1600_seed2 1600 --seed=2
go muon_lr0.03_1100 1100 --optimizer=muon --muon_lr=0.03
go muon_embed3e-3_1100 1100 --optimizer=muon --embed_lr=3e-3
wait
for f in /tmp/logs/*.log; do echo "== $(basename $f) $(grep -E '^step' $f | tail -1)"; grep -E "Error|error" $f | tail -3; done | tee $OUT/sweep.txt
tar czf $OUT/sweep_logs.tgz -C /tmp/logs .
timeout 120 python .devdata/opt_parts.py > $OUT/opt_parts.txt 2>&1; cat $OUT/opt_parts.txt | cut -c1-200
