#!/bin/bash
# `make bench`: every benchmark against its peers, in one run on this machine.
#   1. GEMM GFLOP/s against OpenBLAS and PyTorch, with the no-FMA peak (bench/run-gemm.sh)
#      -> bench/results/gemm.md
#   2. training steps per second (MNIST LeNet-5, the GPT example) on 1 and 2 threads against
#      PyTorch at its fastest setting on as many threads or fewer (bench/peers/torch_settings.py),
#      peak and working memory, cold start, library and WebAssembly sizes (bench/run_bench.py)
#      -> bench/results/train.md; and what a training receipt costs, a step with one against the
#      same step without (bench/run_receipt_bench.py) -> bench/results/receipts.md
#   3. data-parallel training over Open MPI: the GPT example with 1, 2 and 4 ranks, bytes per step
#      against a ring all-reduce, and PyTorch DDP's 1-rank and 2-rank weights compared
#      (bench/run_distributed_bench.py) -> bench/results/distributed.md
#   4. real models: torchvision networks (random weights) through ONNX import against PyTorch, inference
#      at batch 1 and 8 and a training step, on 1 and 2 threads (bench/run_real_models.py)
#      -> bench/results/real-models.md; a GPT-2-small-shaped model, lockstep's own GPT against
#      the same nanoGPT module in PyTorch, a training step and generation -> bench/results/gpt2-small.md;
#      and ResNet-18 and MobileNetV2 in WebAssembly (Node) against ONNX Runtime Web, with ResNet-18's
#      training step and its memory -> bench/results/wasm-real-models.md
# docs/performance.md explains the tables. Options are passed to both drivers: --quick (fewer
# sizes, steps and rounds).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
quick=()
[ "${1:-}" = --quick ] && quick=(--quick)

build="$root/build/bench"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_BUILD_BENCH=ON \
    -DLOCKSTEP_BUILD_TESTS=OFF -DLOCKSTEP_BUILD_TOOLS=OFF >/dev/null
fi
nice ninja -C "$build" lockstep_gemm_bench lockstep_peak_flops lockstep_fused_peak_flops lockstep_train_bench lockstep_data_parallel_bench \
  lockstep_cli lockstep_python >/dev/null
# The npm package every time (ninja rebuilds what changed): the WebAssembly rows measure this tree.
"$root/tools/build-npm-package" >/dev/null

echo "== GEMM"
"$root/bench/run-gemm.sh" --clock cpu "${quick[@]}"
echo
echo "== training steps, memory, start-up, size"
/usr/bin/python3 "$root/bench/run_bench.py" --build "$build" "${quick[@]}"
echo
echo "== training receipts"
/usr/bin/python3 "$root/bench/run_receipt_bench.py" --build "$build" "${quick[@]}"
echo
echo "== data-parallel training (Open MPI)"
/usr/bin/python3 "$root/bench/run_distributed_bench.py" --build "$build" "${quick[@]}"
echo
echo "== real models (torchvision through ONNX import)"
/usr/bin/python3 "$root/bench/run_real_models.py" --package "$build/python" --train-bench "$build/bench/lockstep_train_bench" \
  --peak-flops "$build/bench/lockstep_peak_flops" \
  "${quick[@]}"
