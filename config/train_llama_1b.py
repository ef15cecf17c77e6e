# A 1B-class LLaMA-style model (1.08B: RMSNorm, rotary, SwiGLU, grouped-query attention with 4 key/value heads of
# 16, head dim 128, context 2048) on OpenWebText with GPT-2's BPE; prepare with python data/openwebtext/prepare.py.
# Its weights, gradients and AdamW state are 16 bytes a parameter, 16 GiB: DDP keeps them on every GPU, FSDP splits
# them across the GPUs. train.py prints the estimate per GPU under both at 1, 2, 4 and 8 GPUs before it starts.
# One 8-GPU node: torchrun --standalone --nproc_per_node=8 train.py config/train_llama_1b.py --parallelism=fsdp
# tokens per iteration: 4 batch * 2048 block * 64 accumulation steps (over all ranks) = ~0.5M
wandb_log = False
wandb_project = 'owt'
wandb_run_name = 'llama-1b'

arch = 'llama'
n_layer = 22
n_head = 16
n_kv_head = 4
n_embd = 2048
rope_theta = 10000.0
batch_size = 4
block_size = 2048
gradient_accumulation_steps = 8 * 8

learning_rate = 3e-4
min_lr = 3e-5
warmup_iters = 2000
max_iters = 600000
lr_decay_iters = 600000

eval_interval = 1000
eval_iters = 200
log_interval = 10
weight_decay = 1e-1
