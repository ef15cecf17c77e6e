# GPT-2 XL (1.5B) on OpenWebText; prepare with python data/openwebtext/prepare.py.
# Its weights, gradients and AdamW state are 16 bytes a parameter, 23 GiB: DDP keeps them on every GPU, FSDP splits
# them across the GPUs. train.py prints the estimate per GPU under both at 1, 2, 4 and 8 GPUs before it starts.
# One 8-GPU node: torchrun --standalone --nproc_per_node=8 train.py config/train_gpt2_xl.py --parallelism=fsdp
# tokens per iteration: 8 batch * 1024 block * 64 accumulation steps (over all ranks) = ~0.5M
wandb_log = False
wandb_project = 'owt'
wandb_run_name = 'gpt2-xl'

n_layer = 48
n_head = 25
n_embd = 1600
batch_size = 8
block_size = 1024
gradient_accumulation_steps = 8 * 8

learning_rate = 2e-4  # GPT-3 XL's (1.3B)
min_lr = 2e-5
warmup_iters = 700  # 375M tokens, as GPT-3
max_iters = 600000
lr_decay_iters = 600000

eval_interval = 1000
eval_iters = 200
log_interval = 10
weight_decay = 1e-1
