#!/usr/bin/env bash
# Sets kvplan up on a fresh Debian 12 machine and runs the main job:
# installs the missing Debian packages, configures and builds the release
# preset, and sizes the cache of a bundled model. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

# Build: compiler, CMake, the six libraries (libcurl: the Hub client). Tests: valgrind (the CLI is run
# under it), python3 (docs examples), clang-format (the formatting check).
# nvcc is optional: with it the CUDA kernel is built too.
packages=(cmake ninja-build g++ libcli11-dev libfmt-dev libyaml-cpp-dev nlohmann-json3-dev
          doctest-dev valgrind python3 clang-format libcurl4-openssl-dev)
bash scripts/install-packages.sh "${packages[@]}"

cmake --preset release >/dev/null
cmake --build --preset release
# The main job on the bundled catalogs: the cache of Llama-3.1-70B explained,
# then how many 32K-token users it serves on four H100s in fp8.
echo
./build/release/kvplan size llama-3.1-70b -c 4K --explain
echo
./build/release/kvplan capacity llama-3.1-70b --gpu h100-sxm -tp 4 --max-model-len 32K \
  --kv-cache-dtype fp8
