#!/usr/bin/env bash
# Traces and `lockstep diff` end to end: the shortened MNIST reference run traced on two x86 SIMD
# targets, with 1 and 2 threads, and in WebAssembly (SIMD128 and scalar) is identical record for
# record; a one-ulp fault planted in one op at one step is named exactly; bad trace files get
# clear errors (exit 2). usage: bindings/native/cli/trace_test.sh ROOT_BUILD_DIR (build/ with
# native/ and, when present, wasm-simd/ and wasm-scalar/)
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
builds=$(cd "${1:?usage: trace_test.sh BUILD_ROOT}" && pwd)
cli=$builds/native/bindings/native/cli/lockstep
mnist=$builds/native/examples/mnist/lockstep_mnist
data=$root/.deps/data/mnist
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
run=(--steps 30 --test 200 --quiet --data "$data")

check_diff() {  # check_diff WANT_STATUS PATTERN A B
  local want=$1 pattern=$2 out status
  out=$("$cli" diff "$3" "$4" 2>&1); status=$?
  if [ "$status" -ne "$want" ] || ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: lockstep diff $(basename "$3") $(basename "$4") -> $status (want $want):"; sed 's/^/    /' <<<"$out" | head -15
    failures=$((failures + 1))
  else
    echo "ok: lockstep diff $(basename "$3") $(basename "$4") -> $status: $(grep -E -m1 -- "$pattern" <<<"$out")"
  fi
}

# 1. The same run on every target: identical, record for record.
targets=$("$builds/native/tests/lockstep_battery" --list-targets)
best=$(head -1 <<<"$targets")
"$mnist" "${run[@]}" --threads 2 --trace "$work/best.trace" >/dev/null || { echo "FAIL: traced run"; exit 1; }
records=$(grep -c '"step"' "$work/best.trace")
"$mnist" "${run[@]}" --threads 1 --target SSE4 --trace "$work/sse4.trace" >/dev/null
check_diff 0 "IDENTICAL" "$work/best.trace" "$work/sse4.trace"
for flavour in simd scalar; do
  wasm=$builds/wasm-$flavour/examples/mnist/lockstep_mnist.js
  if [ -f "$wasm" ]; then
    node "$wasm" "${run[@]}" --trace "$work/wasm-$flavour.trace" >/dev/null
    check_diff 0 "compared $records aligned records: $records identical" "$work/best.trace" "$work/wasm-$flavour.trace"
  else
    echo "FAIL: $wasm was not built"; failures=$((failures + 1))
  fi
done
echo "   ($records records per trace, target $best natively)"

# 2. A planted fault: one ulp in module 3's convolution at step 7 is the first divergence.
LOCKSTEP_TRACE_FAULT=7:3:conv2d "$mnist" "${run[@]}" --trace "$work/fault.trace" >/dev/null
check_diff 1 "^FIRST DIVERGENCE: step 7 forward 3 conv2d call 0$" "$work/best.trace" "$work/fault.trace"
"$cli" diff "$work/best.trace" "$work/fault.trace" --html "$work/fault.html" >/dev/null
grep -q "<table>" "$work/fault.html" && echo "ok: --html writes the module x step grid" ||
  { echo "FAIL: no HTML report"; failures=$((failures + 1)); }

# 3. Bad trace files.
head -c 20000 "$work/best.trace" >"$work/truncated.trace"
check_diff 2 "the trace is truncated" "$work/best.trace" "$work/truncated.trace"
sed '1s/"lockstep_trace":1/"lockstep_trace":9/' "$work/best.trace" >"$work/v9.trace"
check_diff 2 "format version 9" "$work/v9.trace" "$work/best.trace"
check_diff 2 "not a lockstep trace" "$data/train-labels.idx" "$work/best.trace"
"$builds/native/examples/gpt/lockstep_gpt" --config tiny --steps 3 --quiet --data "$root/.deps/data/fortunes/input.txt" \
  --trace "$work/gpt.trace" >/dev/null
check_diff 2 "do not describe the same run" "$work/best.trace" "$work/gpt.trace"

[ "$failures" -eq 0 ] && echo "trace_test: all passed" || echo "trace_test: $failures failed"
[ "$failures" -eq 0 ]
