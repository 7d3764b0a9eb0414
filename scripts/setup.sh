#!/usr/bin/env bash
# Installs every build and test dependency of GraphEngine from Debian 12's
# packages. Safe to run again.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != 0 ]; then SUDO=sudo; fi
PKGS=(build-essential cmake ninja-build pkg-config
      libprotobuf-dev protobuf-compiler libonnx-dev libdnnl-dev libhwy-dev
      libcli11-dev nlohmann-json3-dev libxxhash-dev libgtest-dev libgmock-dev
      libssl-dev libonnx-testdata python3-onnx python3-numpy)
missing=()
for p in "${PKGS[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "installing: ${missing[*]}"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
