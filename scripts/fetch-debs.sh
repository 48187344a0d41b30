#!/usr/bin/env bash
# Downloads the Debian packages kvplan builds against (fmt, yaml-cpp, CLI11,
# doctest) as .deb files into .debs/ (git-ignored), so that
# scripts/gpu-check.sh can unpack them with `dpkg -x` on the GPU machine,
# which has nvcc, CMake and ninja but none of these packages and no network.
# Run it here, on a Debian 12 developer machine, before calling the device
# tool with carry [".debs"]. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(libfmt-dev libfmt9 libyaml-cpp-dev libyaml-cpp0.7 libcli11-dev doctest-dev)
mkdir -p .debs
cd .debs
if ! apt-get download "${packages[@]}" 2>/dev/null; then
  # The package lists may be missing on a fresh machine.
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  apt-get download "${packages[@]}"
fi
ls -1 ./*.deb
