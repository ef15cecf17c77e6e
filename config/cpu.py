# Shrinks a run to fit a CPU in minutes; apply after the main config:
# python train.py config/train_shakespeare_char.py config/cpu.py
device = 'cpu'
compile = False
eval_iters = 20
eval_interval = 250
log_interval = 50
block_size = 64
batch_size = 12
gradient_accumulation_steps = 1
n_layer = 4
n_head = 4
n_embd = 128
max_iters = 2000
lr_decay_iters = 2000
dropout = 0.0
