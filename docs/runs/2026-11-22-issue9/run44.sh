#!/bin/bash
# issue 9 on 2 GPUs (NCCL): a signal to rank 1 stops both with a checkpoint, resume; a rank killed;
# a rank stopped (SIGSTOP): the other ends within ddp_timeout with a message
export PYTHONUNBUFFERED=1
python data/shakespeare_char/prepare.py .devdata/input.txt > /dev/null 2>&1
A="config/train_shakespeare_char.py --compile=False --max_iters=100000 --eval_interval=200 --eval_iters=20 --log_interval=10 --gradient_accumulation_steps=2 --kernels_cache=/tmp/kc.json --ddp_timeout=30"
rank1() { for p in $(pgrep -P $1); do grep -qz "^RANK=1$" /proc/$p/environ && echo $p; done; }
waitfor() { for i in $(seq 1 900); do grep -q "$2" $1 && return 0; sleep 0.2; done; return 1; }
for fault in signal kill stop; do
  torchrun --standalone --nproc_per_node=2 train.py $A --out_dir=/tmp/$fault > $OUT/$fault.txt 2>&1 &
  T=$!; waitfor $OUT/$fault.txt "^iter 300:"; R1=$(rank1 $T); t0=$(date +%s.%N)
  case $fault in signal) kill -TERM $R1;; kill) kill -KILL $R1;; stop) kill -STOP $R1;; esac
  waitfor $OUT/$fault.txt "stopped by\|error: rank" ; t1=$(date +%s.%N)
  [ $fault = stop ] && sleep 2 && kill -KILL $R1
  wait $T; rc=$?
  echo "$fault: rc $rc, message after $(python -c "print(round($t1 - $t0, 1))") s"
  grep -E "stopped by|error: rank|saved checkpoint.*iter|Watchdog|ChildFailed" $OUT/$fault.txt | cut -c1-250 | tail -4
done
timeout 120 torchrun --standalone --nproc_per_node=2 train.py $A --out_dir=/tmp/signal --max_iters=400 --init_from=resume > $OUT/resume.txt 2>&1; echo "resume rc $?"
grep -E "resumed|^iter 400|saved" $OUT/resume.txt | cut -c1-200
