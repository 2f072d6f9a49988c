#!/usr/bin/env bash
# Data-parallel training over Open MPI (docs/distributed.md), in processes started by mpirun:
#   - the shortened MNIST reference run with 1, 2, 3 and 4 ranks gives the golden hashes of
#     tests/golden/mnist.txt, and the GPT example's 50-step tiny run with 1, 2 and 4 ranks every
#     golden line of tests/golden/gpt.txt (losses, estimates, hashes, sample);
#   - a BatchNorm network gives one process's hash with 1, 2 and 3 ranks (also with a batch that
#     splits groups between ranks);
#   - a training state written by 2 ranks is the one 1 process writes, and resumed by 3 ranks it
#     ends on the uninterrupted hash;
#   - one rank killed with SIGKILL stops the whole job within seconds, with a message, and the run
#     resumed from its last state by another number of ranks ends on the uninterrupted hash;
#   - a build without MPI refuses a job of several processes with the reason.
# usage: tests/distributed/run.sh BUILD_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: tests/distributed/run.sh BUILD_DIR}" && pwd)
cd "$root"
cli=$build/bindings/native/cli/lockstep
gpt=$build/examples/gpt/lockstep_gpt
batchnorm=$build/tests/distributed/lockstep_batchnorm_check
no_mpi=$build/tests/distributed/lockstep_no_mpi_check
mnist_data=$root/.deps/data/mnist
text=$root/.deps/data/fortunes/input.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# This machine runs as root in a container with 2 cores: --allow-run-as-root, --oversubscribe for 3
# and 4 ranks, no binding to cores (other work shares them); shared memory between the ranks.
mpi_flags=(--allow-run-as-root --oversubscribe --bind-to none --mca btl self,vader)
mpi() {  # ranks command...
  local ranks=$1; shift
  mpirun "${mpi_flags[@]}" -np "$ranks" "$@"
}
pass() { echo "ok: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
field() { sed -n "s/^$1: *//p"; }  # a line of `lockstep train`'s report

if ! command -v mpirun >/dev/null || [ ! -x "$batchnorm" ]; then
  fail "no mpirun or no $batchnorm (tools/setup.sh installs Open MPI; then rebuild)"
  exit 1
fi
for need in "$mnist_data/train-images.idx" "$text"; do
  [ -f "$need" ] || { fail "missing $need (tools/setup.sh)"; exit 1; }
done

# 1. The shortened MNIST run: every hash and the accuracy, byte for byte.
want_mnist=$(awk '$1 == "short" {print $2, $3}' tests/golden/mnist.txt)
for ranks in 1 2 3 4; do
  out=$(mpi "$ranks" "$cli" train mnist --steps 3 --test 100 --data "$mnist_data" 2>&1)
  got=$(printf 'initial %s\ntrained %s\nlogits %s\naccuracy %s\n' "$(field 'initial hash' <<<"$out")" \
        "$(field 'trained hash' <<<"$out")" "$(field 'logits hash' <<<"$out")" \
        "$(field 'test accuracy' <<<"$out" | cut -d' ' -f1)")
  if [ "$got" = "$want_mnist" ]; then
    pass "MNIST short, $ranks ranks: the golden hashes ($(field 'trained hash' <<<"$out" | cut -c1-16)...)"
  else
    fail "MNIST short, $ranks ranks:"; diff <(echo "$want_mnist") <(echo "$got") | sed 's/^/    /'
    tail -3 <<<"$out" | sed 's/^/    /'
  fi
done

# 2. The GPT example's tiny run: every golden line (tools/gpt-golden-lines, as check-matrix).
want_gpt=$(awk '$1 == "tiny"' tests/golden/gpt.txt)
for ranks in 1 2 4; do
  out=$(mpi "$ranks" "$gpt" --config tiny --steps 50 --sample 200 --quiet --data "$text" 2>&1)
  got=$(tools/gpt-golden-lines tiny <<<"$out")
  if [ -n "$want_gpt" ] && [ "$got" = "$want_gpt" ]; then
    pass "GPT tiny, $ranks ranks: all $(wc -l <<<"$want_gpt") golden lines"
  else
    fail "GPT tiny, $ranks ranks: first difference (< golden, > this run): $(diff <(echo "$want_gpt") <(echo "$got") | grep -m2 '^[<>]' | tr '\n' ' ')"
    tail -3 <<<"$out" | sed 's/^/    /'
  fi
done

# 3. BatchNorm: batch statistics are reductions over the batch in the forward pass. Batch 100
# splits on group boundaries; batch 40 on 3 ranks (13/13/14) splits groups between ranks.
for batch in 100 40; do
  alone=$("$batchnorm" --data "$mnist_data" --steps 4 --batch "$batch" 2>&1 | sed -n 's/^hash //p')
  [ ${#alone} -eq 64 ] || { fail "BatchNorm network, batch $batch: one process gave no hash"; continue; }
  for ranks in 1 2 3; do
    got=$(mpi "$ranks" "$batchnorm" --data "$mnist_data" --steps 4 --batch "$batch" 2>&1 | sed -n 's/^hash //p')
    if [ "$got" = "$alone" ]; then
      pass "BatchNorm network, batch $batch, $ranks ranks: one process's hash ${alone:0:16}..."
    else
      fail "BatchNorm network, batch $batch, $ranks ranks: ${got:-no hash}, one process: $alone"
    fi
  done
done

# 4. Restart with another number of ranks: the state 2 ranks write at step 6 is the file one process
# writes there, and 3 ranks resuming it end on the uninterrupted 12-step hashes.
whole=$("$cli" train mnist --steps 12 --test 100 --data "$mnist_data" 2>&1)
"$cli" train mnist --steps 6 --checkpoint-every 6 --checkpoint "$work/alone.state" --data "$mnist_data" >/dev/null 2>&1
mpi 2 "$cli" train mnist --steps 6 --checkpoint-every 6 --checkpoint "$work/two.state" --data "$mnist_data" >/dev/null 2>&1
resumed=$(mpi 3 "$cli" train mnist --steps 12 --test 100 --resume "$work/two.state" --data "$mnist_data" 2>&1)
if [ -f "$work/two.state" ] && cmp -s "$work/alone.state" "$work/two.state"; then
  pass "MNIST: the state 2 ranks wrote at step 6 is byte for byte the one process's"
else
  fail "MNIST: the state 2 ranks wrote at step 6 differs from one process's (or is missing)"
fi
for what in 'trained hash' 'logits hash'; do
  a=$(field "$what" <<<"$whole") b=$(field "$what" <<<"$resumed")
  if [ ${#a} -eq 64 ] && [ "$a" = "$b" ]; then
    pass "MNIST: written by 2 ranks at step 6, resumed by 3: the uninterrupted $what"
  else
    fail "MNIST: resumed by 3 ranks: $what ${b:-missing}, uninterrupted ${a:-missing}"; tail -3 <<<"$resumed" | sed 's/^/    /'
  fi
done

# 5. A rank killed with SIGKILL: the job stops within seconds with a message; resumed from the last
# state by 3 ranks, the run ends on the uninterrupted hash.
steps=300
uninterrupted=$("$cli" train gpt --config tiny --steps $steps --data "$text" 2>&1 | field 'trained hash')
state=$work/gpt.state
mpirun "${mpi_flags[@]}" -np 2 "$cli" train gpt --config tiny --steps $steps --checkpoint-every 25 --checkpoint "$state" \
  --data "$text" >"$work/killed.log" 2>&1 &
launcher=$!  # mpirun itself: the ranks are its children
for _ in $(seq 200); do [ -f "$state" ] && break; sleep 0.05; done
sleep 0.3
victim=""
for child in $(ps -o pid= --ppid "$launcher"); do
  if tr '\0' '\n' <"/proc/$child/environ" 2>/dev/null | grep -qx 'OMPI_COMM_WORLD_RANK=1'; then victim=$child; fi
done
if [ -z "$victim" ] || [ ! -f "$state" ]; then
  fail "fault: no rank 1 to kill, or no state written (the run ended too soon?)"; kill "$launcher" 2>/dev/null; wait "$launcher"
else
  kill -9 "$victim"
  killed_at=$SECONDS
  for _ in $(seq 600); do kill -0 "$launcher" 2>/dev/null || break; sleep 0.05; done
  if kill -0 "$launcher" 2>/dev/null; then
    fail "fault: the job still runs 30 s after rank 1 was killed"; kill -9 "$launcher"; wait "$launcher"
  else
    wait "$launcher"; status=$?
    if [ "$status" -ne 0 ] && grep -q 'rank 1 .*exited on signal 9' "$work/killed.log"; then
      pass "fault: rank 1 killed, the job stopped in $((SECONDS - killed_at)) s (exit $status): $(grep -m1 -o 'process rank 1.*' "$work/killed.log")"
    else
      fail "fault: exit $status after the kill, message:"; tail -5 "$work/killed.log" | sed 's/^/    /'
    fi
    got=$(mpi 3 "$cli" train gpt --config tiny --steps $steps --resume "$state" --data "$text" 2>&1 | field 'trained hash')
    if [ ${#uninterrupted} -eq 64 ] && [ "$got" = "$uninterrupted" ]; then
      pass "fault: resumed by 3 ranks from the last state, the uninterrupted hash ${got:0:16}..."
    else
      fail "fault: resumed by 3 ranks: ${got:-no hash}, uninterrupted ${uninterrupted:-missing}"
    fi
  fi
fi

# 6. Without MPI in the build.
if out=$("$no_mpi" 2>&1); then
  pass "without MPI: $(sed -n 's/^ok: //p' <<<"$out")"
else
  fail "without MPI:"; sed 's/^/    /' <<<"$out"
fi

[ "$failures" -eq 0 ] && echo "distributed: all passed" || echo "distributed: $failures failed"
[ "$failures" -eq 0 ]
