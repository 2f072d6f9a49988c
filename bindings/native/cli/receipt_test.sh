#!/usr/bin/env bash
# Receipts, verification and disputes end to end (docs/verifiable-training.md): a 100-step MNIST
# run writes a receipt; `lockstep verify-run` checks all of it, a range from a given checkpoint and
# a random sample; a run with a one-ulp fault planted in one op at step 37 fails verification at
# step 37, and `lockstep dispute` locates it to step 37 and that op, from either side; a tampered
# chain, a checkpoint that does not match its receipt, other data and receipts of different runs
# are refused (exit 2); the GPT trainer likewise (a fault at step 17 located to its op). The same
# receipt, byte for byte, is written natively, by two MPI ranks, in WebAssembly (Node) and on
# AArch64 and s390x (qemu), and each side verifies the others'.
#   usage: bindings/native/cli/receipt_test.sh BUILD_ROOT   (build/ with native/, wasm-simd/, aarch64/, s390x/)
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
builds=$(cd "${1:?usage: receipt_test.sh BUILD_ROOT}" && pwd)
cli=$builds/native/bindings/native/cli/lockstep
mnist=$builds/native/examples/mnist/lockstep_mnist
data=$root/.deps/data/mnist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
run=(--steps 100 --test 100 --data "$data" --receipt-every 10)

check() {  # check NAME WANT_STATUS PATTERN command...
  local name=$1 want=$2 pattern=$3 out status
  shift 3
  out=$("$@" 2>&1); status=$?
  if [ "$status" -ne "$want" ] || ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: $name -> exit $status (want $want, /$pattern/):"; sed 's/^/    /' <<<"$out" | tail -12
    failures=$((failures + 1))
  else
    echo "ok: $name -> exit $status: $(grep -E -m1 -- "$pattern" <<<"$out")"
  fi
}

mkdir -p "$work/a" "$work/b" "$work/bad"
"$cli" train mnist "${run[@]}" --receipt "$work/a/run.receipt" >/dev/null || { echo "FAIL: the receipt run"; exit 1; }
a=$work/a/run.receipt
check "verify-run, every step" 0 "^VERIFIED$" "$cli" verify-run "$a" --data "$data"
check "verify-run, steps 37-41 from the checkpoint at 30" 0 "^VERIFIED$" \
  "$cli" verify-run "$a" --checkpoint "$work/a/run.receipt.30.state" --steps 37-41 --data "$data"
check "verify-run, a sample of 5" 0 "^sampled steps \(seed 7\): [0-9 ]+$" \
  "$cli" verify-run "$a" --sample 5 --seed 7 --data "$data"
check "the receipt does not depend on the threads" 0 "" \
  bash -c '"$1" train mnist "${@:3}" --threads 1 --receipt "$2/one.receipt" >/dev/null &&
           diff <(grep -v checkpoint "$2/one.receipt") <(grep -v checkpoint "$2/a/run.receipt")' _ "$cli" "$work" "${run[@]}"

# A one-ulp fault in module 3's convolution at step 37 (the trace hook, docs/diagnostics.md).
LOCKSTEP_TRACE_FAULT=37:3:conv2d "$cli" train mnist "${run[@]}" --receipt "$work/b/run.receipt" \
  --trace "$work/b/run.trace" --trace-values "$work/b/run.values" --trace-steps 37-37 >/dev/null
b=$work/b/run.receipt
check "verify-run of the faulty run" 1 "^FAILED: step 37 does not match the receipt$" "$cli" verify-run "$b" --data "$data"
check "dispute A B: the step" 1 "^first differing step: 37 of 100 \(bisection: [0-9]+ chain comparisons\)$" \
  "$cli" dispute "$a" "$b" --trace-b "$work/b/run.trace" --b-values "$work/b/run.values" --data "$data"
check "dispute A B: the op" 1 "^first diverging op: step 37 forward 3 conv2d call 0 " \
  "$cli" dispute "$a" "$b" --trace-b "$work/b/run.trace" --b-values "$work/b/run.values" --data "$data"
check "dispute A B: its values on both sides" 1 "^  1 of 160000 elements differ, by up to 1 ulp$" \
  "$cli" dispute "$a" "$b" --trace-b "$work/b/run.trace" --b-values "$work/b/run.values" --data "$data"
check "dispute B A: the re-execution supports the honest side" 1 "^DISPUTE: step 37; the re-execution supports B$" \
  "$cli" dispute "$b" "$a" --trace-a "$work/b/run.trace" --data "$data"
check "dispute A A" 0 "agree on every one of their 100 common steps" "$cli" dispute "$a" "$a" --data "$data"

# Refused: a tampered chain, checkpoints that do not match, other data, another run.
# One hex digit of step 45's state hash changed (to another hex digit).
/usr/bin/python3 - "$a" "$work/bad/tampered.receipt" <<'PY'
import sys
lines = open(sys.argv[1]).read().split("\n")
i = next(n for n, l in enumerate(lines) if l.startswith('{"step":45,'))
k = lines[i].index('"state":"') + 9
lines[i] = lines[i][:k] + ("1" if lines[i][k] == "0" else "0") + lines[i][k + 1:]
open(sys.argv[2], "w").write("\n".join(lines))
PY
cmp -s "$a" "$work/bad/tampered.receipt" && { echo "FAIL: the tampering changed nothing"; failures=$((failures + 1)); }
check "a tampered chain (verify-run)" 2 "tampered chain" "$cli" verify-run "$work/bad/tampered.receipt" --data "$data"
check "a tampered chain (dispute)" 2 "tampered chain" "$cli" dispute "$a" "$work/bad/tampered.receipt" --data "$data"
check "another run's state as the checkpoint" 2 "does not match its receipt: its state at step 40" \
  "$cli" verify-run "$a" --checkpoint "$work/b/run.receipt.40.state" --steps 41-42 --data "$data"
cp "$work/a/run.receipt"* "$work/bad/" && cp "$work/b/run.receipt.40.state" "$work/bad/run.receipt.40.state"
check "a checkpoint file replaced beside its receipt" 2 "does not match its receipt: its SHA-256 is" \
  "$cli" verify-run "$work/bad/run.receipt" --steps 45-46 --data "$data"
mkdir -p "$work/otherdata" && cp "$data"/*.idx "$work/otherdata/" &&
  printf '\x01' | dd of="$work/otherdata/train-images.idx" bs=1 seek=5000 conv=notrunc status=none
check "other training data" 2 "is not the receipt's" "$cli" verify-run "$a" --sample 1 --data "$work/otherdata"
"$cli" train mnist "${run[@]}" --seed 3 --receipt "$work/bad/seed3.receipt" >/dev/null
check "receipts of different runs" 2 "not receipts of the same claimed run" \
  "$cli" dispute "$a" "$work/bad/seed3.receipt" --data "$data"
check "not a receipt" 2 "not a lockstep receipt" "$cli" verify-run "$data/train-labels.idx" --data "$data"
check "--receipt with --resume" 2 "a receipt covers a run from its first step" \
  "$cli" train mnist "${run[@]}" --receipt "$work/bad/r.receipt" --resume "$work/a/run.receipt.30.state"

same_receipt() {  # same_receipt NAME DIR [REFERENCE]: DIR/run.receipt is REFERENCE's (A's), byte for byte
  local reference=${3:-$a}
  if cmp -s "$reference" "$2/run.receipt"; then echo "ok: $1 writes the same receipt, byte for byte"
  else echo "FAIL: $1 wrote another receipt"; diff "$reference" "$2/run.receipt" | head -4; failures=$((failures + 1)); fi
}

# Fine-tuning an imported ONNX model (`train onnx`, 30 steps): verified whole and by a sample from
# the ONNX file; another model, no model and a kept state swapped for another are refused.
mkdir -p "$work/onnx"
lenet=$root/.deps/onnx/lenet5.onnx
"$cli" train onnx "$lenet" --data "$data" --steps 30 --receipt "$work/onnx/run.receipt" --receipt-every 10 >/dev/null
o=$work/onnx/run.receipt
check "train onnx: verify-run with its model" 0 "^VERIFIED$" "$cli" verify-run "$o" --model "$lenet" --data "$data"
check "train onnx: a sample" 0 "^VERIFIED$" "$cli" verify-run "$o" --model "$lenet" --data "$data" --sample 3 --seed 9
check "train onnx: another model" 2 "the model given is not the receipt's: its model is onnx:" \
  "$cli" verify-run "$o" --model "$root/.deps/onnx/mlp_bn.onnx" --data "$data"
check "train onnx: no model" 2 "give it \(verify-run --model FILE.onnx\)" "$cli" verify-run "$o" --data "$data"
cp "$work/onnx/run.receipt.20.state" "$work/onnx/run.receipt.10.state"
check "train onnx: a kept state swapped" 2 "run.receipt.10.state does not match its receipt" \
  "$cli" verify-run "$o" --model "$lenet" --data "$data" --steps 15-15

# The GPT trainer (tiny, 30 steps): verified whole; a fault in the first block's GELU at step 17
# located to that step and op; two MPI ranks write the same receipt.
text=$root/.deps/data/fortunes/input.txt
gpt=(--config tiny --steps 30 --data "$text" --receipt-every 10)
mkdir -p "$work/gpt-a" "$work/gpt-b" "$work/gpt-mpi"
"$cli" train gpt "${gpt[@]}" --receipt "$work/gpt-a/run.receipt" >/dev/null || { echo "FAIL: the GPT receipt run"; exit 1; }
check "gpt: verify-run, every step" 0 "^VERIFIED$" "$cli" verify-run "$work/gpt-a/run.receipt" --data "$text"
LOCKSTEP_TRACE_FAULT=17:transformer.h.0.mlp:gelu "$cli" train gpt "${gpt[@]}" --receipt "$work/gpt-b/run.receipt" \
  --trace "$work/gpt-b/run.trace" --trace-values "$work/gpt-b/run.values" --trace-steps 17-17 >/dev/null
check "gpt: verify-run of the faulty run, steps 11-20" 1 "^FAILED: step 17 " "$cli" verify-run "$work/gpt-b/run.receipt" --steps 11-20 --data "$text"
check "gpt: a sample that misses step 17 passes (each kept state is the claimed one)" 0 "^VERIFIED$" \
  "$cli" verify-run "$work/gpt-b/run.receipt" --sample 2 --seed 5 --data "$text"
check "gpt: dispute, the op" 1 "^first diverging op: step 17 forward transformer.h.0.mlp gelu call 0 " \
  "$cli" dispute "$work/gpt-a/run.receipt" "$work/gpt-b/run.receipt" --trace-b "$work/gpt-b/run.trace" \
  --b-values "$work/gpt-b/run.values" --data "$text"
mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np 2 "$cli" train gpt "${gpt[@]}" \
  --receipt "$work/gpt-mpi/run.receipt" >/dev/null
same_receipt "lockstep train gpt over 2 MPI ranks" "$work/gpt-mpi" "$work/gpt-a/run.receipt"

# Across platforms and processes: the same bytes, and each verifies the others'.
mkdir -p "$work/mpi" "$work/wasm"
mpirun --allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader -np 2 "$mnist" "${run[@]}" --receipt "$work/mpi/run.receipt" --quiet >/dev/null
same_receipt "lockstep_mnist over 2 MPI ranks" "$work/mpi"
wasm=$builds/wasm-simd/examples/mnist/lockstep_mnist.js
if [ -f "$wasm" ]; then
  (cd "$work/wasm" && node "$wasm" "${run[@]}" --receipt run.receipt --quiet >/dev/null)
  same_receipt "WebAssembly (Node)" "$work/wasm"
  check "WebAssembly verifies the native receipt (a sample)" 0 "^VERIFIED 3 steps" \
    node "$wasm" --verify-receipt "$a" --sample 3 --sample-seed 1 --data "$data" --quiet
  check "native verifies the WebAssembly receipt" 0 "^VERIFIED$" "$cli" verify-run "$work/wasm/run.receipt" --steps 90-100 --data "$data"
  check "WebAssembly finds the fault at step 37" 1 "^FAILED: step 37 " \
    node "$wasm" --verify-receipt "$b" --data "$data" --quiet
else
  echo "FAIL: $wasm was not built"; failures=$((failures + 1))
fi
# An emulated platform writes the native receipt of a short run byte for byte, verifies the native
# one (a sample) and is verified by it.
#   emulated NAME EXAMPLE STEPS EVERY SAMPLE_SEED WRITER_QEMU... -- VERIFIER_QEMU...
emulated() {
  local name=$1 example=$2 steps=$3 every=$4 seed=$5 dir writer=() verifier=()
  shift 5
  while [ "$1" != -- ]; do writer+=("$1"); shift; done
  shift
  verifier=("$@")
  if [ ! -f "$example" ]; then
    echo "FAIL: $example was not built"; failures=$((failures + 1))
    return
  fi
  dir=$work/emulated-$steps
  local run=(--steps "$steps" --test 100 --data "$data" --receipt-every "$every")
  mkdir -p "$dir/native" "$dir/$name"
  [ -f "$dir/native/run.receipt" ] || "$cli" train mnist "${run[@]}" --receipt "$dir/native/run.receipt" >/dev/null
  (cd "$dir/$name" && "${writer[@]}" "$example" "${run[@]}" --receipt run.receipt --quiet >/dev/null)
  same_receipt "$name (qemu)" "$dir/$name" "$dir/native/run.receipt"
  check "$name verifies the native receipt (a sample)" 0 "^VERIFIED 1 steps" \
    "${verifier[@]}" "$example" --verify-receipt "$dir/native/run.receipt" --sample 1 --sample-seed "$seed" \
    --data "$data" --quiet
  check "native verifies the $name receipt" 0 "^VERIFIED$" "$cli" verify-run "$dir/$name/run.receipt" --data "$data"
}
# AArch64: 20 steps (emulated, a step takes a second), written with SVE, verified on qemu's default
# CPU; s390x: big-endian (the state tree hashes each tensor's little-endian bytes), 6 steps.
emulated "AArch64" "$builds/aarch64/examples/mnist/lockstep_mnist" 20 10 4 \
  qemu-aarch64 -cpu max,sve-default-vector-length=32 -- qemu-aarch64
emulated "s390x" "$builds/s390x/examples/mnist/lockstep_mnist" 6 3 2 qemu-s390x -- qemu-s390x

echo "receipt_test: $failures failure(s)"
[ "$failures" -eq 0 ]
