#!/usr/bin/env bash
# Installs the build tree into a fresh prefix and builds programs outside the
# project against it, once through the CMake package (consumer/) and once
# through pkg-config with a plain C compiler, then runs them on a model.
# Usage: check.sh BUILD_DIR WORK_DIR   (CTest's install_consumer runs it).
set -euo pipefail
build=$(cd "$1" && pwd)
work=$2
src=$(cd "$(dirname "$0")" && pwd)
model=$src/../new_opsets/mlp_softmax_opset23/model.onnx
rm -rf "$work"
mkdir -p "$work"
work=$(cd "$work" && pwd)
prefix=$work/prefix
cmake --install "$build" --prefix "$prefix" --component dev >/dev/null

# Only the public headers are installed.
extra=$(find "$prefix/include" -type f ! -path "$prefix/include/gec/*.h")
[ -z "$extra" ] || { echo "check: files other than include/gec/*.h installed: $extra" >&2; exit 1; }
# The installed headers include only each other and standard headers, and
# each compiles on its own.
bad=$(grep -h '^#include' "$prefix"/include/gec/*.h | grep -v -E '^#include (<[a-z_]+(\.h)?>|"gec/[a-z_]+\.h")$' || true)
[ -z "$bad" ] || { echo "check: installed headers include non-public headers: $bad" >&2; exit 1; }
for h in "$prefix"/include/gec/*.h; do
  echo "#include <gec/$(basename "$h")>" | c++ -std=c++17 -fsyntax-only -I"$prefix/include" -x c++ - ||
    { echo "check: $h does not compile on its own" >&2; exit 1; }
done
echo '#include <gec/c_api.h>' | cc -std=c99 -pedantic -Werror -fsyntax-only -I"$prefix/include" -x c - ||
  { echo "check: gec/c_api.h is not C99" >&2; exit 1; }

# 1. The installed tool compiles the model.
"$prefix/bin/gec" compile "$model" -o "$work/model.gom" >/dev/null

# 2. The CMake package.
cmake -S "$src/consumer" -B "$work/consumer" -G Ninja -DCMAKE_PREFIX_PATH="$prefix" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work/consumer" >/dev/null
"$work/consumer/run_gom" "$work/model.gom" softmax
"$work/consumer/compile_and_run" "$model" "$work/model_cpp.gom"

# 3. pkg-config and a plain C compiler (runtime only: no libonnx needed).
export PKG_CONFIG_PATH=$prefix/lib/pkgconfig
cc -std=c99 -O1 -o "$work/run_gom_pc" "$src/consumer/run_gom.c" $(pkg-config --cflags --libs graphengine) -lm \
  -Wl,-rpath,"$(pkg-config --variable=libdir graphengine)"
"$work/run_gom_pc" "$work/model.gom" softmax
! ldd "$work/run_gom_pc" | grep -q onnx || { echo "check: a runtime-only consumer links libonnx" >&2; exit 1; }
[ "$(pkg-config --modversion graphengine-compiler)" = "$(pkg-config --modversion graphengine)" ]

# 4. The tree is relocatable: moved elsewhere, the tool and the consumer still run.
mv "$prefix" "$work/moved"
"$work/moved/bin/gec" --version
LD_LIBRARY_PATH=$work/moved/lib "$work/run_gom_pc" "$work/model.gom" >/dev/null
echo "check: install tree, CMake package and pkg-config consumers ok"
