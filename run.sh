#!/usr/bin/env bash
# The main job from nothing: install, prepare Tiny Shakespeare (character level), train
# on the best device here (the full config on a GPU, a small one on a CPU), then sample.
#   bash run.sh                      # downloads Tiny Shakespeare
#   bash run.sh path/to/input.txt    # or uses a local copy (machines without internet)
set -euo pipefail
cd "$(dirname "$0")"
python3 -c "import torch" 2>/dev/null || python3 -m pip install --quiet torch==2.13.0
python3 -m pip install --quiet -r requirements.txt
python3 data/shakespeare_char/prepare.py "$@"
if python3 -c "import sys, torch; sys.exit(not torch.cuda.is_available())"; then
    python3 train.py config/train_shakespeare_char.py
else
    echo "no GPU: training a small model on the CPU (config/cpu.py)"
    python3 train.py config/train_shakespeare_char.py config/cpu.py
fi
python3 sample.py --out_dir=out-shakespeare-char --num_samples=1 --max_new_tokens=300
