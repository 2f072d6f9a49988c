#!/usr/bin/env bash
# The `lockstep` command misused as a new user or an adversary would: bad values, device nodes,
# FIFOs, hostile data files, non-finite data, a full disk. Every case must end with a clear message
# and exit status 2, nothing written where it must not be, and the tool still working afterwards.
# usage: bindings/native/cli/misuse_test.sh BUILD_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=$(cd "${1:?usage: misuse_test.sh BUILD_DIR}" && pwd)
cli=$build/bindings/native/cli/lockstep
data=$root/.deps/data/mnist
text=$root/.deps/data/fortunes/input.txt
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0

# expect STATUS PATTERN command... : within 60 s, exit status STATUS and output matching PATTERN.
expect() {
  local want=$1 pattern=$2; shift 2
  local out got
  out=$(timeout 60 "$@" 2>&1); got=$?
  if [ "$got" -ne "$want" ] || ! grep -Eq -- "$pattern" <<<"$out"; then
    echo "FAIL: $* -> exit $got (want $want), output:"; sed 's/^/    /' <<<"$out" | head -20
    failures=$((failures + 1))
  else
    echo "ok: $* -> $got"
  fi
}
check() {  # check DESCRIPTION command...: the command must succeed
  if "${@:2}"; then echo "ok: $1"; else echo "FAIL: $1"; failures=$((failures + 1)); fi
}

# IDX writer for hostile data sets: idx FILE TYPE DIMS... -- VALUES... (TYPE: ubyte or float)
idx() {
  /usr/bin/python3 - "$@" <<'PY'
import struct, sys
args = sys.argv[1:]
path, kind = args[0], args[1]
sep = args.index("--")
dims = [int(d) for d in args[2:sep]]
values = [float(v) for v in args[sep + 1:]]
count = 1
for d in dims:
    count *= d
values = (values * (count // max(len(values), 1) + 1))[:count] if values else []
code, fmt = (0x08, "B") if kind == "ubyte" else (0x0D, "f")
with open(path, "wb") as f:
    f.write(bytes([0, 0, code, len(dims)]) + b"".join(struct.pack(">I", d) for d in dims))
    f.write(b"".join(struct.pack(">" + fmt, int(v) if fmt == "B" else v) for v in values))
PY
}

# --- values that are not what they look like
expect 2 "unexpected argument 'extra'" "$cli" train mnist --epochs 1 extra
for bad in "+1" " 1" "010" "1.5" "0x10" "1e2" ""; do
  expect 2 "invalid value '$(sed 's/[][\.*^$+?(){}|/]/\\&/g' <<<"$bad")' for --epochs" "$cli" train mnist --epochs "$bad"
done
expect 2 "option '--out' needs a non-empty value" "$cli" train mnist --epochs 1 --out ""
expect 2 "option '--data' needs a non-empty value" "$cli" train mnist --epochs 1 --data ""
expect 2 "option '--data' needs a non-empty value" "$cli" eval x --data ""
expect 2 "option '--epochs' is given twice" "$cli" train mnist --epochs 1 --epochs 2
expect 2 "option '--allow-nonfinite' takes no value" "$cli" train mnist --allow-nonfinite=1
expect 2 "--checkpoint FILE needs --checkpoint-every" "$cli" train mnist --checkpoint "$work/s"
expect 2 "cannot read '$work': it is a folder" "$cli" train gpt --data "$work" --steps 1
expect 2 "temperature" "$cli" sample x --temperature 1e-40x

# --- device nodes, FIFOs and symbolic links: refused before any work, never replaced
expect 2 "cannot write '/dev/null': it is a character device" "$cli" train mnist --epochs 1 --data "$data" --out /dev/null
check "/dev/null is still a character device" test -c /dev/null
mkfifo "$work/fifo"
for cmd in "eval $work/fifo --data $data" "hash $work/fifo" "verify $work/fifo --expect $(printf 'a%.0s' {1..64})" \
           "sample $work/fifo --config tiny --data $text" "canonicalize $work/fifo $work/out"; do
  # shellcheck disable=SC2086
  expect 2 "FIFO" "$cli" $cmd
done
expect 2 "cannot write '$work/fifo': it is a FIFO" "$cli" train mnist --epochs 1 --data "$data" --out "$work/fifo"
check "the FIFO is still a FIFO" test -p "$work/fifo"
expect 2 "character device" "$cli" eval /dev/zero --data "$data"
expect 2 "character device" "$cli" hash /dev/zero

# --- evaluation: labels outside the classes and an empty test set are errors, not accuracy 0
if [ -f "$data/train-images.idx" ]; then
  "$cli" train mnist --epochs 1 --data "$data" --out "$work/m.safetensors" >/dev/null 2>&1
  mkdir -p "$work/badlabels" "$work/empty"
  idx "$work/badlabels/test-images.idx" ubyte 4 28 28 -- 0 255
  idx "$work/badlabels/test-labels.idx" ubyte 4 -- 1 200
  expect 2 "label of example 1 is 200, outside the model's 10 classes" "$cli" eval "$work/m.safetensors" \
    --data "$work/badlabels"
  idx "$work/empty/test-images.idx" ubyte 0 28 28 --
  idx "$work/empty/test-labels.idx" ubyte 0 --
  expect 2 "the data set is empty" "$cli" eval "$work/m.safetensors" --data "$work/empty"

  # hostile data: a header declaring 4 GiB of images is refused by its header, at once
  mkdir -p "$work/huge"
  printf '\x00\x00\x08\x03\x00\x01\x00\x00\x00\x00\x01\x00\x00\x00\x01\x00' >"$work/huge/test-images.idx"
  idx "$work/huge/test-labels.idx" ubyte 65536 -- 1
  expect 2 "LOCKSTEP_ERROR_FORMAT.*truncated IDX file.*need 4294967296 bytes" "$cli" eval "$work/m.safetensors" \
    --data "$work/huge"

  # a checkpoint written by another tool: eval says which hash it prints; canonicalize writes it
  /usr/bin/python3 - "$work/m.safetensors" "$work/foreign.safetensors" <<'PY'
import json, struct, sys
data = open(sys.argv[1], "rb").read()
n = struct.unpack_from("<Q", data, 0)[0]
header = json.loads(data[8:8 + n])
header.pop("__metadata__")
text = json.dumps(header, indent=1).encode()  # whitespace and key order another writer might use
text += b" " * (-len(text) % 8)
open(sys.argv[2], "wb").write(struct.pack("<Q", len(text)) + text + data[8 + n:])
PY
  model_hash=$(sha256sum "$work/m.safetensors" | cut -d' ' -f1)
  expect 0 "model hash: *$model_hash \(the file's SHA-256" "$cli" eval "$work/m.safetensors" --data "$data"
  expect 0 "file sha256: *$(sha256sum "$work/foreign.safetensors" | cut -d' ' -f1) \(not canonical" \
    "$cli" eval "$work/foreign.safetensors" --data "$data"
  expect 0 "model hash: *$model_hash \(the canonical" "$cli" eval "$work/foreign.safetensors" --data "$data"
  expect 0 "^$model_hash  $work/canonical.safetensors" "$cli" canonicalize "$work/foreign.safetensors" \
    "$work/canonical.safetensors"
  expect 0 "^OK" "$cli" verify "$work/canonical.safetensors" --expect "$model_hash"

  # --- NaN data: training stops at the first non-finite loss, unless allowed
  mkdir -p "$work/nan"
  idx "$work/nan/train-images.idx" float 200 28 28 -- 0.5 nan
  idx "$work/nan/train-labels.idx" ubyte 200 -- 3
  cp "$data/test-images.idx" "$data/test-labels.idx" "$work/nan/"
  expect 2 "LOCKSTEP_ERROR_STATE.*training stopped at step 1 .*the loss is nan" \
    "$cli" train mnist --epochs 1 --data "$work/nan" --out "$work/nan.safetensors"
  check "no model was written after the stop" test ! -e "$work/nan.safetensors"
  expect 0 "trained hash" "$cli" train mnist --epochs 1 --data "$work/nan" --allow-nonfinite

  # --- a full disk (a file size limit) while saving: an I/O error, the old file intact
  cp "$work/m.safetensors" "$work/keep.safetensors"
  expect 2 "LOCKSTEP_ERROR_IO.*cannot write '$work/keep.safetensors'" \
    bash -c "trap '' XFSZ; ulimit -f 8; exec \"$cli\" train mnist --epochs 1 --data \"$data\" --out \"$work/keep.safetensors\""
  check "the replaced checkpoint kept its content" cmp -s "$work/m.safetensors" "$work/keep.safetensors"
  check "no temporary file is left" test -z "$(find "$work" -maxdepth 1 -name '.*tmp*')"

  # --- resuming another run's state is refused
  "$cli" train mnist --epochs 1 --data "$data" --checkpoint-every 40 --checkpoint "$work/s.state" >/dev/null 2>&1
  expect 2 "LOCKSTEP_ERROR_STATE.*belongs to another run: its seed is 2, this run's is 3" \
    "$cli" train mnist --epochs 1 --data "$data" --resume "$work/s.state" --seed 3
  expect 2 "LOCKSTEP_ERROR_FORMAT.*not a lockstep training state" \
    "$cli" train mnist --epochs 1 --data "$data" --resume "$work/m.safetensors"
fi

# --- a large data set: memory stays near the files' size (byte images stay bytes), and Ctrl-C
# stops the run at once, while it loads or trains
if [ -f "$data/train-images.idx" ]; then
  mkdir -p "$work/big"
  /usr/bin/python3 - "$work/big" <<'PY'
import os, struct, sys
n = 256000  # 28 x 28 bytes each: 200 MB of images
with open(os.path.join(sys.argv[1], "train-images.idx"), "wb") as f:
    f.write(bytes([0, 0, 8, 3]) + struct.pack(">III", n, 28, 28))
    row = bytes((i * 7) % 256 for i in range(784))
    f.write(row * n)
with open(os.path.join(sys.argv[1], "train-labels.idx"), "wb") as f:
    f.write(bytes([0, 0, 8, 1]) + struct.pack(">I", n) + bytes(i % 10 for i in range(n)))
PY
  cp "$data/test-images.idx" "$data/test-labels.idx" "$work/big/"
  size_kb=$(( $(stat -c %s "$work/big/train-images.idx") / 1024 ))
  /usr/bin/time -f %M -o "$work/rss" "$build/examples/mnist/lockstep_mnist" --data "$work/big" --steps 2 \
    --test 100 --quiet >/dev/null 2>&1
  peak_kb=$(cat "$work/rss")
  if [ "$peak_kb" -lt $((size_kb * 3 / 2 + 150000)) ]; then
    echo "ok: 200 MB of byte images trained with a peak of $((peak_kb / 1024)) MB resident"
  else
    echo "FAIL: 200 MB of byte images peaked at $((peak_kb / 1024)) MB resident"; failures=$((failures + 1))
  fi
  "$cli" train mnist --data "$work/big" >/dev/null 2>&1 &
  pid=$!
  sleep 0.3
  kill -INT "$pid"
  start=$SECONDS
  wait "$pid"; status=$?
  if [ "$status" -eq 130 ] && [ $((SECONDS - start)) -le 3 ]; then
    echo "ok: Ctrl-C stops train mnist on a large data set (exit 130)"
  else
    echo "FAIL: Ctrl-C on a large data set: exit $status after $((SECONDS - start)) s"; failures=$((failures + 1))
  fi
  rm -rf "$work/big"
fi

# --- sampling from non-finite or overflowing logits is refused
if [ -f "$text" ]; then
  "$cli" train gpt --config tiny --steps 2 --data "$text" --out "$work/g.safetensors" >/dev/null 2>&1
  expect 2 "LOCKSTEP_ERROR_STATE.*logits for token 1 are not finite" \
    "$cli" sample "$work/g.safetensors" --config tiny --data "$text" --temperature 1e-40
fi

# --- and afterwards the tool still works
expect 0 "contract version" "$cli" info

echo
[ "$failures" -eq 0 ] && echo "misuse_test: all passed" || echo "misuse_test: $failures failed"
[ "$failures" -eq 0 ]
