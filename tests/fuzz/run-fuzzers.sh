#!/usr/bin/env bash
# Builds the file-parser fuzz targets with clang (libFuzzer, ASan, UBSan) in build/fuzz and runs
# them side by side, each for about SECONDS (default 30) of CPU time, from a small generated seed
# corpus. Exits non-zero when a target cannot be built or any run finds a crash, a sanitizer
# report, an escaped exception, a leak, a timeout or an allocation above 64 MB; the input that did
# it is kept in build/fuzz/artifacts/. Usage: tests/fuzz/run-fuzzers.sh [SECONDS]
set -euo pipefail
seconds=${1:-30}
[[ "$seconds" =~ ^[0-9]+$ ]] || { echo "usage: $0 [SECONDS]" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
build="$root/build/fuzz"

cxx=$(command -v clang++-14 || command -v clang++ || true)
[ -n "$cxx" ] || { echo "run-fuzzers: clang++ not found (Debian: clang-14)" >&2; exit 1; }
mkdir -p "$build"
cmake -S "$root/tests/fuzz" -B "$build" -G Ninja -DCMAKE_CXX_COMPILER="$cxx" \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
grep "lockstep fuzz targets: skipped" "$build.configure.log" && exit 1
rm -f "$build.configure.log"
nice ninja -C "$build" fuzz_safetensors fuzz_idx fuzz_onnx

# Seeds: valid files of each kind (canonical and as other writers lay them out), written fresh
# each run; the working corpus starts from them.
rm -rf "$build/seeds" "$build/corpus"
mkdir -p "$build/seeds/safetensors" "$build/seeds/idx" "$build/seeds/onnx" "$build/corpus/safetensors" \
  "$build/corpus/idx" "$build/corpus/onnx" "$build/artifacts"
python3 - "$build/seeds" <<'PY'
import struct, sys
out = sys.argv[1]

def safetensors(header, data, pad=True):
    h = header.encode()
    if pad:
        h += b" " * (-len(h) % 8)
    return struct.pack("<Q", len(h)) + h + data

def write(name, data):
    with open(f"{out}/{name}", "wb") as f:
        f.write(data)

write("safetensors/canonical", safetensors(
    '{"__metadata__":{"contract":"1","format":"lockstep"},'
    '"b":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},'
    '"idx":{"dtype":"I32","shape":[0],"data_offsets":[8,8]},'
    '"w":{"dtype":"F32","shape":[2,1],"data_offsets":[8,16]}}',
    struct.pack("<qII", 7, 0x3F800000, 0x7FC00000)))
write("safetensors/python-style", safetensors(
    '{"weight": {"shape": [2], "dtype": "F32", "data_offsets": [4, 12]},\n'
    ' "\\u00e9\\ud83d\\ude00": {"dtype": "I32", "shape": [], "data_offsets": [0, 4]},'
    ' "__metadata__": {"format": "pt", "k\\n": "v\\""}}',
    struct.pack("<iff", 3, 1.5, float("nan")), pad=False))
write("safetensors/empty", safetensors("{}", b""))

def idx(code, fmt, dims, values):
    return (bytes([0, 0, code, len(dims)]) + struct.pack(">%dI" % len(dims), *dims)
            + struct.pack(">%d%s" % (len(values), fmt), *values))

write("idx/ubyte", idx(0x08, "B", [2, 3], [0, 1, 2, 3, 4, 255]))
write("idx/float32", idx(0x0D, "f", [2, 2], [0.25, -1.5, float("nan"), 1e-45]))
write("idx/int32", idx(0x0C, "i", [3], [-2, 16777217, 2147483647]))
write("idx/int16", idx(0x0B, "h", [1, 2], [-300, 258]))
write("idx/int8", idx(0x09, "b", [2], [-128, 127]))
write("idx/float64", idx(0x0E, "d", [2], [0.1, float("inf")]))

# ONNX: a hand-encoded model (Gemm with an initializer, a Constant, a Reshape).
def varint(v):
    v &= (1 << 64) - 1
    out = b""
    while v >= 0x80:
        out += bytes([v & 0x7F | 0x80])
        v >>= 7
    return out + bytes([v])

def field(n, payload):
    if isinstance(payload, int):
        return varint(n << 3) + varint(payload)
    return varint(n << 3 | 2) + varint(len(payload)) + payload

def value_info(name, dims):
    shape = b"".join(field(1, field(1, d) if d >= 0 else field(2, b"N")) for d in dims)
    return field(1, name) + field(2, field(1, field(1, 1) + field(2, shape)))

def node(op, ins, outs, attrs=b""):
    return b"".join(field(1, i) for i in ins) + b"".join(field(2, o) for o in outs) + field(4, op) + attrs

weight = field(1, varint(2) + varint(3)) + field(2, 1) + field(8, b"w") + field(9, struct.pack("<6f", *range(6)))
shape = field(1, varint(1)) + field(2, 7) + field(8, b"s") + field(7, varint(2**64 - 1))
graph = (field(1, node(b"Gemm", [b"x", b"w"], [b"g"], field(5, field(1, b"transB") + field(3, 1) + field(20, 2))))
         + field(1, node(b"Reshape", [b"g", b"s"], [b"y"]))
         + field(5, weight) + field(5, shape)
         + field(11, value_info(b"x", [-1, 3])) + field(12, value_info(b"y", [-1])))
write("onnx/gemm", field(1, 8) + field(7, graph) + field(8, field(1, b"") + field(2, 13)))
PY
# A few of ONNX's own test models, where Debian's libonnx-testdata is installed.
for case in test_relu test_conv_with_strides_padding test_layer_normalization_2d_axis0 test_slice_neg_steps; do
  model=/usr/share/libonnx-testdata/data/node/$case/model.onnx
  [ -f "$model" ] && cp "$model" "$build/seeds/onnx/$case"
done

# Tokens that help the fuzzer reach deep into the safetensors header.
cat >"$build/safetensors.dict" <<'DICT'
"\"__metadata__\""
"\"dtype\""
"\"shape\""
"\"data_offsets\""
"\"F32\""
"\"I32\""
"\"I64\""
"\\u"
"\\ud83d\\ude00"
"18446744073709551615"
"9223372036854775807"
"4294967296"
DICT

status=0
cat >"$build/onnx.dict" <<'DICT'
"Conv"
"Gemm"
"Reshape"
"Constant"
"Slice"
"ai.onnx"
"\x08\x07"
"\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01"
DICT

# The three targets run at once, each for SECONDS x 3 / CPUs of wall time (at least SECONDS): the
# same CPU time each as one after another, in a third of the time on two cores.
cpus=$(nproc 2>/dev/null || echo 1)
wall=$(( seconds * 3 / (cpus < 3 ? cpus : 3) ))
parsers=(safetensors idx onnx) pids=()
for parser in "${parsers[@]}"; do
  dict=()
  [ "$parser" = safetensors ] && dict=(-dict="$build/safetensors.dict")
  [ "$parser" = onnx ] && dict=(-dict="$build/onnx.dict")
  echo "run-fuzzers: fuzz_$parser for $wall s"
  nice "$build/fuzz_$parser" "${dict[@]}" -max_total_time="$wall" -max_len=4096 \
    -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=64 -print_final_stats=1 \
    -artifact_prefix="$build/artifacts/$parser-" \
    "$build/corpus/$parser" "$build/seeds/$parser" 2>"$build/$parser.log" &
  pids+=($!)
done
for i in "${!parsers[@]}"; do
  parser=${parsers[i]}
  if ! wait "${pids[$i]}"; then
    tail -n 60 "$build/$parser.log"
    echo "run-fuzzers: fuzz_$parser FAILED; the input is in $build/artifacts/" >&2
    status=1
  else
    grep -E "^(Done|stat::number_of_executed_units|stat::peak_rss_mb)" "$build/$parser.log" || true
    echo "run-fuzzers: fuzz_$parser: no finding"
  fi
done
exit $status
