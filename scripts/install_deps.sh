#!/usr/bin/env bash
# Installs the Debian 12 packages that servesim's build and tests need, and only those that
# are missing. Safe to run again. Must run as root (or with sudo available).
# The CUDA toolkit is not an apt package: the build detects /usr/local/cuda on its own.
set -euo pipefail

packages=(
  g++ cmake ninja-build ccache pkg-config
  libeigen3-dev nlohmann-json3-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev
  qt6-base-dev qt6-charts-dev libqt6opengl6-dev
  libopenmpi-dev openmpi-bin
  libboost-dev libcairo2-dev libsentencepiece-dev
  clang-16 libclang-rt-16-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "install_deps: all ${#packages[@]} packages already installed"
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then
  SUDO="sudo"
fi
echo "install_deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
