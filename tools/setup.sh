#!/usr/bin/env bash
# Installs every Debian 12 package KernelArc's build needs. Idempotent: when everything is
# present it only checks and returns.
#   tools/setup.sh        the build's packages (what tools/build.sh, demo.sh, test.sh need)
#   tools/setup.sh lint   those and the lint tools: clang-format-14, clang-tidy-14 (tools/lint.sh)
#   tools/setup.sh fuzz   those and clang 14 with its sanitizer runtimes (tools/fuzz.sh)
set -euo pipefail
packages=(
  build-essential cmake ninja-build ccache pkg-config
  libcaf-dev librocksdb-dev libsnappy-dev zlib1g-dev libbz2-dev liblz4-dev libzstd-dev
  libflatbuffers-dev flatbuffers-compiler flatbuffers-compiler-dev
  libfmt-dev libspdlog-dev libcli11-dev libtomlplusplus-dev nlohmann-json3-dev
  libcpp-httplib-dev libssl-dev googletest libgtest-dev libgmock-dev libbenchmark-dev
  bubblewrap libseccomp-dev
)
for group in "$@"; do
  case $group in
    lint) packages+=(clang-format-14 clang-tidy-14) ;;
    fuzz) packages+=(clang-14 libclang-rt-14-dev) ;;
    *) echo "setup: unknown group '$group' (lint, fuzz)" >&2; exit 2 ;;
  esac
done
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "setup: installing ${missing[*]}"
  sudo_cmd=()
  [ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
  export DEBIAN_FRONTEND=noninteractive
  "${sudo_cmd[@]}" apt-get update -qq
  "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}"
fi
