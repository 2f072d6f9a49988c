#!/bin/bash
# GEMM speed: lockstep against OpenBLAS and PyTorch on this machine, in one run.
#
#   bench/run-gemm.sh [--quick] [--rounds R] [--sizes LIST] [--threads LIST] [--all-targets]
#                     [--clock wall|cpu] [--out FILE]
#
# Builds lockstep_gemm_bench and lockstep_peak_flops (in build/bench, a build of its own with
# LOCKSTEP_BUILD_BENCH=ON, so it never disturbs build/native), measures the peak multiply-then-add
# rate, then runs R rounds; each round runs, for every thread count, lockstep (best target),
# OpenBLAS (cblas_sgemm) and PyTorch (torch.matmul) as separate processes, in alternating order
# (odd rounds lockstep first, even rounds lockstep last), so that a busy neighbour on the machine
# hits all of them alike. The table gives, per shape and thread count, the median over every
# sample of every round, and the min-max range in a second table. With --all-targets, one more
# lockstep process measures every runnable Highway target. --clock cpu divides by process CPU time
# per thread instead of wall time (every program alike): use it when the machine is shared, since
# other processes then take cores away at random; the report says which clock it used.
#
# Peers run under `env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE` (this machine's environment forces
# a slower OpenBLAS kernel otherwise); thread counts are set before each library loads
# (see bench/peers/gemm_peers.py). Writes the report to bench/results/gemm.md (or --out FILE).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
py=/usr/bin/python3
quick=0
rounds=
sizes=
threads=1,2
all_targets=0
clock=wall
out="$root/bench/results/gemm.md"
while [ $# -gt 0 ]; do
  case "$1" in
    --quick) quick=1 ;;
    --rounds) rounds=$2; shift ;;
    --sizes) sizes=$2; shift ;;
    --threads) threads=$2; shift ;;
    --all-targets) all_targets=1 ;;
    --clock) clock=$2; shift ;;
    --out) out=$2; shift ;;
    -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
    *) echo "unknown argument $1" >&2; exit 2 ;;
  esac
  shift
done
[ -n "$rounds" ] || rounds=$([ $quick = 1 ] && echo 2 || echo 5)
common=(--clock "$clock")
[ $quick = 1 ] && common+=(--quick)
[ -n "$sizes" ] && common+=(--sizes "$sizes")

# --- build -----------------------------------------------------------------------------------------
build="$root/build/bench"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release -DLOCKSTEP_BUILD_BENCH=ON \
    -DLOCKSTEP_BUILD_TESTS=OFF -DLOCKSTEP_BUILD_TOOLS=OFF >/dev/null
fi
nice ninja -C "$build" lockstep_gemm_bench lockstep_peak_flops >/dev/null
gemm_bench="$build/bench/lockstep_gemm_bench"
peak="$build/bench/lockstep_peak_flops"
# The contract: no fused multiply-add anywhere in what is measured.
for exe in "$gemm_bench" "$peak"; do
  if objdump -d "$exe" | grep -q vfmadd; then
    echo "run-gemm.sh: $exe contains vfmadd instructions (contract violation)" >&2
    exit 1
  fi
done

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
peer() {  # peer NAME THREADS -> TSV on stdout
  env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE "$py" "$root/bench/peers/gemm_peers.py" \
    --peer "$1" --threads "$2" --tsv "${common[@]}"
}
lockstep() {  # lockstep THREADS TARGETS -> TSV on stdout
  "$gemm_bench" --threads "$1" --targets "$2" --tsv "${common[@]}"
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg)" > "$work/load"
echo "== peak multiply-then-add rate" >&2
"$peak" --targets best --threads "$threads" --ms "$([ $quick = 1 ] && echo 100 || echo 200)" --clock "$clock" --tsv > "$work/peak.tsv"
IFS=, read -r -a thread_list <<< "$threads"
for ((r = 1; r <= rounds; r++)); do
  for t in "${thread_list[@]}"; do
    if ((r % 2)); then order="lockstep openblas torch"; else order="torch openblas lockstep"; fi
    for impl in $order; do
      echo "== round $r/$rounds, $t thread(s): $impl" >&2
      case $impl in
        lockstep) lockstep "$t" best > "$work/r$r-t$t-lockstep.tsv" ;;
        *) peer "$impl" "$t" > "$work/r$r-t$t-$impl.tsv" ;;
      esac
    done
  done
done
if [ $all_targets = 1 ]; then
  echo "== every runnable target (lockstep only)" >&2
  "$gemm_bench" --threads "$threads" --targets all --tsv "${common[@]}" > "$work/targets.tsv" || true
fi
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)" >> "$work/load"

mkdir -p "$(dirname "$out")"
"$py" "$root/bench/peers/gemm_report.py" --dir "$work" --rounds "$rounds" \
  --mode "$([ $quick = 1 ] && echo quick || echo full)" --clock "$clock" | tee "$out"
echo "(written to $out)" >&2
