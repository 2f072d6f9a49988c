#!/usr/bin/env bash
# Installs lockstep from a build directory into a temporary prefix, builds the consumers against
# it (CMake find_package, and pkg-config for the C one) and runs them.
# usage: tests/native_consumer/run.sh [BUILD_DIR]   (default build/native)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=$(cd "${1:-$root/build/native}" && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix

echo "--- install $build -> $prefix"
cmake --install "$build" --prefix "$prefix" >"$work/install.log" || { cat "$work/install.log"; exit 1; }
# Only the binding's files are installed; the static core stays private.
find "$prefix" -type f -o -type l | sed "s|$prefix/||" | sort

echo "--- find_package(lockstep)"
cmake -S "$here" -B "$work/build" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" >"$work/configure.log" || { cat "$work/configure.log"; exit 1; }
ninja -C "$work/build" >"$work/build.log" || { cat "$work/build.log"; exit 1; }
"$work/build/consumer_c" "$work/c.safetensors"
"$work/build/consumer_cc" "$work/cc.safetensors"
"$work/build/consumer_cxx"

echo "--- pkg-config lockstep"
pcdir=$(dirname "$(find "$prefix" -name lockstep.pc)")
flags=$(PKG_CONFIG_PATH=$pcdir pkg-config --cflags --libs lockstep)
echo "pkg-config: $flags"
libdir=$(PKG_CONFIG_PATH=$pcdir pkg-config --variable=libdir lockstep)
# shellcheck disable=SC2086
cc -std=c99 -Wall -Wextra -pedantic -Werror "$here/consumer.c" $flags -Wl,-rpath,"$libdir" -o "$work/consumer_pc"
"$work/consumer_pc" "$work/pc.safetensors"

echo "--- the installed CLI"
"$prefix/bin/lockstep" info
echo "native consumers: OK"
