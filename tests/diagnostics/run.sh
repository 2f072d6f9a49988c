#!/usr/bin/env bash
# The PyTorch tracer's tests (tools/torch_trace, docs/diagnostics.md "Tracing a PyTorch loop"):
#
#   tests/diagnostics/run.sh BUILD_DIR [OUT_DIR]
#
# BUILD_DIR: the native build (build/native: tests/reference/lockstep_mnist_steps and
# bindings/native/cli/lockstep). OUT_DIR (default BUILD_DIR/diagnostics) receives the traces and
# the `lockstep diff` reports of cases 3 and 4. The scripts run one after the other (each is well
# under a minute; about 25 s in all on 2 cores) with /usr/bin/python3 (torch and numpy; a script
# skips, exit 77, when they cannot be imported; with LOCKSTEP_REQUIRE_ALL=1, as tools/run-tests sets,
# a skip is a failure). The last line: "N passed, M failed".
set -uo pipefail
if [ $# -lt 1 ]; then
  echo "usage: tests/diagnostics/run.sh BUILD_DIR [OUT_DIR]" >&2
  exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "$1" && pwd) || exit 2
out=${2:-$build/diagnostics}
mkdir -p "$out" && out=$(cd "$out" && pwd) || exit 2
python=${PYTHON:-/usr/bin/python3}
export PYTHONDONTWRITEBYTECODE=1
passed=0 failed=0 skipped=0 failures=()

run() {  # name script args...
  local name=$1; shift
  echo
  echo "=== $name"
  local start=$SECONDS
  "$python" "$@"
  local status=$?
  case $status in
    0) passed=$((passed + 1)); echo "--- $name: ok ($((SECONDS - start)) s)" ;;
    77) if [ "${LOCKSTEP_REQUIRE_ALL:-}" = 1 ]; then  # make test installs everything: no skips
          failed=$((failed + 1)); failures+=("$name"); echo "--- $name: FAILED, skipped ($((SECONDS - start)) s)"
        else
          skipped=$((skipped + 1)); echo "--- $name: skipped ($((SECONDS - start)) s)"
        fi ;;
    *) failed=$((failed + 1)); failures+=("$name"); echo "--- $name: FAILED, status $status ($((SECONDS - start)) s)" ;;
  esac
}

run "torch_trace: the hash against lockstep's, records, hooks, values, interruptions" \
  "$here/tracer_check.py" "$build"
run "case 3: PyTorch against itself under CPU configurations" \
  "$here/case3_torch_vs_torch.py" "$build" "$out"
run "case 4: PyTorch against lockstep" \
  "$here/case4_torch_vs_lockstep.py" "$build" "$out"

echo
[ ${#failures[@]} -gt 0 ] && printf 'failed: %s\n' "${failures[@]}"
echo "reports in $out"
echo "$passed passed, $failed failed$([ "$skipped" -gt 0 ] && echo ", $skipped skipped")"
[ "$failed" -eq 0 ]
