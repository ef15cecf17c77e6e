# Fine-tune OpenAI's GPT-2 XL on Tiny Shakespeare (GPT-2 BPE): python data/shakespeare/prepare.py first.
# One GPU: python train.py config/finetune_shakespeare.py (any size: --init_from=gpt2, gpt2-medium, gpt2-large,
# or a local Hugging Face folder: for its own tokenizer, python data/shakespeare/prepare.py --tokenizer=FOLDER)
import time

out_dir = 'out-shakespeare'
eval_interval = 5
eval_iters = 40
wandb_log = False
wandb_project = 'shakespeare'
wandb_run_name = 'ft-' + str(time.time())

dataset = 'shakespeare'
init_from = 'gpt2-xl'  # the largest GPT-2, from the Hugging Face hub

always_save_checkpoint = False  # only when val loss improves

# 32,768 tokens per iteration; Shakespeare has ~300K tokens, so one epoch is ~9 iterations
batch_size = 1
gradient_accumulation_steps = 32
max_iters = 20

# fine-tune at a small, constant learning rate
learning_rate = 3e-5
decay_lr = False
