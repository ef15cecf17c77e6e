# A baby GPT on Tiny Shakespeare, character level: about a minute of training on one modern GPU.
# Prepare the data first: python data/shakespeare_char/prepare.py
out_dir = 'out-shakespeare-char'
eval_interval = 250  # small data overfits: evaluate often
eval_iters = 200
log_interval = 10
always_save_checkpoint = False  # only when val loss improves

wandb_log = False
wandb_project = 'shakespeare-char'
wandb_run_name = 'mini-gpt'

dataset = 'shakespeare_char'
gradient_accumulation_steps = 1
batch_size = 64
block_size = 256  # context of up to 256 characters

n_layer = 6
n_head = 6
n_embd = 384
dropout = 0.2

learning_rate = 1e-3  # a small network can take a larger step
max_iters = 5000
lr_decay_iters = 5000  # usually = max_iters
min_lr = 1e-4  # learning_rate / 10
beta2 = 0.99  # a little larger: few tokens per iteration
warmup_iters = 100
