#!/usr/bin/env bash
# Install what the build needs (Debian packages) if missing, then configure and build.
#   tools/setup.sh [BUILD_DIR] [extra cmake args...]
# SLUBSIM_EXTRA_PACKAGES="a b": more Debian packages this build needs (the fuzz build: clang).
# SLUBSIM_TARGET=T: build only target T (tools/main.sh builds just the simulator).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
pkgs=(g++ cmake make pkg-config python3 python3-matplotlib libboost-program-options-dev nlohmann-json3-dev libfmt-dev doctest-dev
      libhwloc-dev)
read -r -a extra <<<"${SLUBSIM_EXTRA_PACKAGES:-}"
pkgs+=("${extra[@]}")
missing=()
for p in "${pkgs[@]}"; do
  [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "setup: installing ${missing[*]}"
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO=sudo
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${missing[@]}" >/dev/null
fi
cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null  # later -D flags win
target=()
[ -n "${SLUBSIM_TARGET:-}" ] && target=(--target "$SLUBSIM_TARGET")
cmake --build "$build" -j "$(nproc)" "${target[@]}"
