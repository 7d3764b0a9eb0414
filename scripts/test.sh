#!/usr/bin/env bash
# The README's second command (and CI's): install dependencies, build, run
# every test: unit tests, the shared models and cases through `gec test`.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build
cd build && ctest --output-on-failure -j2
