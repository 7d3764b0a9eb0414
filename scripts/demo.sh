#!/usr/bin/env bash
# The README's first command: install dependencies, build, compile the shipped
# PaddleOCR recognizer into an offline model and read a text line with it.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cmake -S . -B build -G Ninja -DCMAKE_BUILD_TYPE=Release >/dev/null
ninja -C build gec ocr_demo
ex=examples/ppocr_rec
# The recognizer takes any width; fix the input to the 48x320 line we ship so
# that all activation memory is planned ahead of time.
./build/gec compile $ex/model.onnx -o build/ppocr_rec.gom -O3 --input-shape x:1,3,48,320
./build/gec inspect build/ppocr_rec.gom | head -15
./build/ocr_demo build/ppocr_rec.gom $ex/hello_world_2024.pb $ex/ppocr_keys_v1.txt $ex/reference_output.pb
