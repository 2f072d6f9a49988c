#!/usr/bin/env bash
# The ONNX front door of the `lockstep` tool (docs/onnx.md): `run` prints the golden output hashes
# of the reference models and writes .npy files whose data hash to them, `convert` writes the
# golden checkpoints, `train onnx` fine-tunes LeNet-5 to the golden hash; and misuse (missing,
# misnamed or mistyped inputs, bad .npy files, truncated and unsupported models, bad paths) exits
# 2 with a message that says what was wrong, writing nothing. Usage: onnx_test.sh BUILD_DIR
set -uo pipefail
root=$(cd "$(dirname "$0")/../../.." && pwd)
build=${1:?usage: onnx_test.sh BUILD_DIR}
lockstep="$build/bindings/native/cli/lockstep"
models="$root/.deps/onnx"
golden="$root/tests/golden/onnx.txt"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
pass() { echo "ok: $1"; }
fail() { echo "FAILED: $1"; failures=$((failures + 1)); }
golden_hash() { awk -v m="$1" -v k="$2" '$1 == m && $2 == k {print $3}' "$golden"; }

[ -x "$lockstep" ] || { echo "onnx_test: $lockstep is not built"; exit 1; }
[ -f "$models/transformer.onnx" ] || { echo "onnx_test: $models has no models (run tools/setup.sh)"; exit 1; }

# expect_error NAME TEXT COMMAND...: exit status 2 and TEXT in stderr.
expect_error() {
  local name=$1 text=$2; shift 2
  local err status
  err=$("$@" 2>&1 >/dev/null)
  status=$?
  if [ "$status" -eq 2 ] && grep -qF -- "$text" <<<"$err"; then pass "$name"; else fail "$name: exit $status, stderr: $err"; fi
}

for m in lenet5 mlp_bn resnet_small transformer; do
  want=$(golden_hash "$m" output)
  out=$("$lockstep" run "$models/$m.onnx" --input "$models/$m.input.npy" --output-dir "$work" 2>&1)
  got=$(awk '{print $1}' <<<"$out")
  if [ -n "$want" ] && [ "$got" = "$want" ]; then pass "run $m: $got"; else fail "run $m: got '$out', golden '$want'"; fi
  # The printed hash is the SHA-256 of the written .npy file's elements.
  data_hash=$(/usr/bin/python3 -c 'import hashlib, sys, numpy as np
a = np.load(sys.argv[1]); print(hashlib.sha256(a.astype(a.dtype.newbyteorder("<")).tobytes()).hexdigest())' "$work/logits.npy")
  [ "$data_hash" = "$got" ] && pass "run $m: logits.npy holds the hashed values" || fail "run $m: logits.npy hashes to $data_hash"
  want=$(golden_hash "$m" checkpoint)
  got=$("$lockstep" convert "$models/$m.onnx" "$work/$m.safetensors" | awk '{print $1}')
  again=$("$lockstep" hash "$work/$m.safetensors" | awk '{print $1}')
  if [ -n "$want" ] && [ "$got" = "$want" ] && [ "$again" = "$want" ]; then pass "convert $m: $got"; else fail "convert $m: $got / $again, golden $want"; fi
done
# The named form of --input, and a model with one integer input.
out=$("$lockstep" run "$models/transformer.onnx" --input "tokens=$models/transformer.input.npy")
[ "$(awk '{print $1}' <<<"$out")" = "$(golden_hash transformer output)" ] && pass "run --input NAME=FILE" || fail "run --input NAME=FILE: $out"

# Fine-tuning LeNet-5: 3 Adam steps of 100 MNIST images, the hash every platform reproduces.
want=$(golden_hash lenet5 finetune)
out=$("$lockstep" train onnx "$models/lenet5.onnx" --data "$root/.deps/data/mnist" --steps 3 --out "$work/tuned.safetensors" 2>&1)
got=$(awk '/^trained hash/ {print $3}' <<<"$out")
if [ -n "$want" ] && [ "$got" = "$want" ] && [ "$("$lockstep" hash "$work/tuned.safetensors" | awk '{print $1}')" = "$want" ]; then
  pass "train onnx lenet5 --steps 3: $got"
else
  fail "train onnx lenet5: got '$got', golden '$want': $out"
fi

# Misuse: exit 2, a message naming what was wrong, no output written.
expect_error "run without an input" "missing --input images=FILE.npy" "$lockstep" run "$models/lenet5.onnx"
expect_error "run with an unknown input name" "has no input 'pixels' (its inputs: images)" \
  "$lockstep" run "$models/lenet5.onnx" --input "pixels=$models/lenet5.input.npy"
expect_error "run with an input given twice" "given twice" \
  "$lockstep" run "$models/lenet5.onnx" --input "$models/lenet5.input.npy" --input "images=$models/lenet5.input.npy"
expect_error "run with the wrong type" "input 'tokens' is declared int64, got float" \
  "$lockstep" run "$models/transformer.onnx" --input "$models/lenet5.input.npy"
/usr/bin/python3 - "$work" <<'PY'
import sys, numpy as np, onnx
from onnx import helper, TensorProto
work = sys.argv[1]
np.save(f"{work}/fortran.npy", np.asfortranarray(np.ones((2, 3), np.float32)))
np.save(f"{work}/complex.npy", np.ones((2,), np.complex64))
np.save(f"{work}/wrong_shape.npy", np.ones((4, 16), np.float32))
with open(f"{work}/truncated.npy", "wb") as f:
    f.write(open(f"{work}/fortran.npy", "rb").read()[:90])
graph = helper.make_graph([helper.make_node("StringNormalizer", ["x"], ["y"], name="the_normalizer")], "g",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2])])
onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), f"{work}/strings.onnx")
PY
head -c 1000 "$models/lenet5.onnx" > "$work/truncated.onnx"
expect_error "run with the wrong shape" "input 'images' is declared [batch, 1, 28, 28], got [4, 16]" \
  "$lockstep" run "$models/lenet5.onnx" --input "$work/wrong_shape.npy"
expect_error "a Fortran-order .npy" "Fortran-order arrays are not supported" \
  "$lockstep" run "$models/lenet5.onnx" --input "$work/fortran.npy"
expect_error "a complex .npy" "element type '<c8' is not supported" "$lockstep" run "$models/lenet5.onnx" --input "$work/complex.npy"
expect_error "a truncated .npy" "the file holds" "$lockstep" run "$models/lenet5.onnx" --input "$work/truncated.npy"
expect_error "a truncated model" "(LOCKSTEP_ERROR_FORMAT)" "$lockstep" run "$work/truncated.onnx" --input "$models/lenet5.input.npy"
expect_error "an unsupported operator" "node 'the_normalizer' (StringNormalizer, opset 13): unsupported operator StringNormalizer" \
  "$lockstep" run "$work/strings.onnx" --input "$models/lenet5.input.npy"
expect_error "a checkpoint given as a model" "loading the model failed" \
  "$lockstep" run "$work/lenet5.safetensors" --input "$models/lenet5.input.npy"
expect_error "a missing model" "loading the model failed (LOCKSTEP_ERROR_IO)" "$lockstep" convert "$work/none.onnx" "$work/x.safetensors"
expect_error "an output folder that does not exist" "is not an existing folder" \
  "$lockstep" run "$models/lenet5.onnx" --input "$models/lenet5.input.npy" --output-dir "$work/none"
expect_error "convert to a device" "writing the checkpoint failed" "$lockstep" convert "$models/lenet5.onnx" /dev/null
expect_error "train onnx on images for a token model" "input 'tokens' is declared int64" \
  "$lockstep" train onnx "$models/transformer.onnx" --data "$root/.deps/data/mnist" --steps 1
expect_error "train onnx with a bad learning rate" "--lr must be a finite number > 0" \
  "$lockstep" train onnx "$models/lenet5.onnx" --lr abc
[ ! -e "$work/x.safetensors" ] && pass "no file written by a failed convert" || fail "a failed convert wrote a file"

echo "onnx_test: $failures failure(s)"
[ "$failures" -eq 0 ]
