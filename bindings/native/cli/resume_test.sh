#!/usr/bin/env bash
# Training killed with SIGKILL at random points and resumed from its last --checkpoint-every state,
# again and again, ends on the hash of the run that was never interrupted: MNIST (one epoch) and
# the GPT example (tiny, with dropout). usage: bindings/native/cli/resume_test.sh BUILD_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "${1:?usage: resume_test.sh BUILD_DIR}" && pwd)
cli=$build/bindings/native/cli/lockstep
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
RANDOM=20261201  # the kill points vary from run to run of the suite only through timing

# killed_and_resumed NAME TRAIN_ARGS...: kills the run at random moments until one attempt
# finishes, resuming from the state each time; compares with the uninterrupted run. Each wait is
# 5-45% of the uninterrupted run's time, so a run of any speed is killed at least twice before an
# attempt can finish. An attempt that was killed before it wrote a new state doubles the waits (a
# loaded machine may need longer to load the data and reach the next checkpoint), so every run
# makes progress.
killed_and_resumed() {
  local name=$1; shift
  local state=$work/$name.state out=$work/$name.safetensors whole kills=0 attempts=0 status
  local scale=1 before after start span
  start=$(date +%s.%N)
  whole=$("$cli" train "$@" 2>&1 | sed -n 's/^trained hash: *//p')
  span=$(awk -v a="$start" -v b="$(date +%s.%N)" 'BEGIN { printf "%.3f", b - a }')
  if [ ${#whole} -ne 64 ]; then
    echo "FAIL: $name: the uninterrupted run gave no hash"; failures=$((failures + 1)); return
  fi
  while [ $attempts -lt 40 ]; do
    attempts=$((attempts + 1))
    local resume=()
    [ -f "$state" ] && resume=(--resume "$state")
    "$cli" train "$@" --checkpoint-every "$every" --checkpoint "$state" "${resume[@]}" --out "$out" \
      >"$work/$name.log" 2>&1 &
    local pid=$!
    before=$(sha256sum "$state" 2>/dev/null)
    sleep "$(awk -v r=$((RANDOM % 41 + 5)) -v s=$scale -v t="$span" 'BEGIN { printf "%.3f", r / 100 * t * s }')"
    if kill -9 "$pid" 2>/dev/null; then
      wait "$pid" 2>/dev/null
      kills=$((kills + 1))
      after=$(sha256sum "$state" 2>/dev/null)
      if [ "$before" = "$after" ] && [ $scale -lt 64 ]; then scale=$((scale * 2)); fi
    else
      wait "$pid"; status=$?
      if [ $status -ne 0 ]; then
        echo "FAIL: $name: attempt $attempts failed (exit $status):"; sed 's/^/    /' "$work/$name.log"
        failures=$((failures + 1)); return
      fi
      break
    fi
  done
  local resumed
  resumed=$(sed -n 's/^trained hash: *//p' "$work/$name.log")
  if [ "$kills" -lt 2 ] || [ "$resumed" != "$whole" ] || [ "$(sha256sum "$out" | cut -d' ' -f1)" != "$whole" ]; then
    echo "FAIL: $name: $kills kills, $attempts attempts: resumed $resumed, uninterrupted $whole"
    failures=$((failures + 1))
  else
    echo "ok: $name: killed $kills times at random points, resumed $attempts times: $whole"
  fi
}

if [ -f "$root/.deps/data/mnist/train-images.idx" ]; then
  every=7 killed_and_resumed mnist mnist --epochs 2 --data "$root/.deps/data/mnist" --threads 2
else
  echo "FAIL: no MNIST data in .deps/data/mnist (tools/setup.sh)"; failures=$((failures + 1))
fi
if [ -f "$root/.deps/data/fortunes/input.txt" ]; then
  every=25 killed_and_resumed gpt gpt --config tiny --steps 1000 --data "$root/.deps/data/fortunes/input.txt"
else
  echo "FAIL: no GPT text in .deps/data/fortunes (tools/setup.sh)"; failures=$((failures + 1))
fi

[ "$failures" -eq 0 ] && echo "resume_test: all passed" || echo "resume_test: $failures failed"
[ "$failures" -eq 0 ]
