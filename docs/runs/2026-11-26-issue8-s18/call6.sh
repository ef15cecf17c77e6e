# Call 6 (nvidia-h100-x1, carry .devdata): the narrowed rule (combo kernels off only where a recomputed region holds
# PyTorch's MLP activation) on CUDA: tests/test_model.py, train.py's graphed-step tests, and the 'mlp' steps it decides:
# LLaMA (PyTorch's SwiGLU when compiled: combo off, expected ~3,022 MiB as call 4) and GPT-2 (the Triton GELU: combo on,
# expected ~26.4 ms at 3,427 MiB as call 5's tree before).
export PYTHONUNBUFFERED=1 KERNELS_AUTOTUNE=0
timeout 200 python -m pytest -q tests/test_model.py 2>&1 | tail -1
TINY_SHAKESPEARE=$PWD/.devdata/input.txt timeout 160 python -m pytest -q tests/test_train.py -k "replayed_from_one_cuda_graph and not ddp" 2>&1 | tail -1
timeout 130 python bench.py --arch=llama --n_kv_head=4 --autocast_residual=True --recompute=mlp --variants="kernels compiled graphed" --bench_dir=/tmp/b > $OUT/bench_llama_mlp.txt 2>&1; echo "llama rc=$?"
timeout 130 python bench.py --autocast_residual=True --recompute=mlp --variants="kernels compiled graphed" --bench_dir=/tmp/b > $OUT/bench_gpt2_mlp.txt 2>&1; echo "gpt2 rc=$?"
for f in llama gpt2; do grep -A2 "variant  ms/iter" $OUT/bench_${f}_mlp.txt | tail -1 | cut -c1-100; done
