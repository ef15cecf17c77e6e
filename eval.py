"""
HellaSwag's validation set (or a file in its format) scored on a checkpoint or pretrained weights, as hellaswag.py
says: acc (summed ending loss) and acc_norm (mean).
$ python eval.py --init_from=gpt2                       # the file downloaded into data/hellaswag/ when there is none
$ python eval.py --out_dir=out --hellaswag=path/to/hellaswag_val.jsonl
"""
import checkpoint
import hellaswag as hs
from model import GPTConfig, GPT
from configurator import configure, device_and_autocast, fail, user_errors

# -----------------------------------------------------------------------------
init_from = 'resume'  # 'resume' (out_dir's checkpoint), 'gpt2'..'gpt2-xl' or a Hugging Face folder
out_dir = 'out'
hellaswag = ''  # a jsonl of HellaSwag's format (ctx, endings, label a line); '' for the validation set, downloaded
examples_per_forward = 16  # each 4 rows, padded to the longest
device = 'auto'  # 'auto', 'cpu', 'cuda', 'cuda:1', ...
dtype = 'auto'  # 'auto', 'float32', 'bfloat16', 'float16'
# -----------------------------------------------------------------------------
config = configure(globals())

if not (isinstance(examples_per_forward, int) and examples_per_forward >= 1):
    fail(f"examples_per_forward={examples_per_forward!r} must be at least 1")
device, _, _, ctx = device_and_autocast(device, dtype)
with user_errors():
    model_args, weights, _, tokenizer = checkpoint.weights(init_from, out_dir, device)
    model = GPT(GPTConfig(**dict(model_args, dropout=0.0)))  # PyTorch's ops: a few hundred forwards in all
    model.load_state_dict(checkpoint.matched(model.state_dict(), weights, out_dir if init_from == 'resume'
                                             else init_from))
    examples, encode = hs.read(hellaswag), hs.encoder(tokenizer, model.config.vocab_size)
model.eval().to(device)
print(hs.summary(hs.right_answers(model, examples, encode, device, ctx, examples_per_forward), len(examples)))
