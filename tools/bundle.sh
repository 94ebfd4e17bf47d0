#!/usr/bin/env bash
# Builds a relocatable bundle of KernelArc in bundle/ (or $1): stripped binaries in bin/ with
# RUNPATH $ORIGIN/../lib, the shared libraries they need that a CUDA machine may lack in lib/
# (everything ldd lists except glibc's own, libcuda and the CUDA toolkit libraries, which the
# GPU machine has), and env.sh. The binaries find cuda/include/arc_cuda.h and the problems
# through ARC_HOME, which env.sh sets to the source tree that holds the bundle.
#   tools/bundle.sh [DIR]      then, on the GPU machine:  . bundle/env.sh && arcd run ...
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$root/bundle}
build=${BUILD_DIR:-$root/build}
bash "$root/tools/build.sh" >/dev/null
command -v patchelf >/dev/null || { sudo -n apt-get install -y -q patchelf >/dev/null 2>&1 || apt-get install -y -q patchelf >/dev/null; }
rm -rf "$out"
mkdir -p "$out/bin" "$out/lib"
bins=(tools/arcd tools/arc-eval tools/arc-replay tools/arc-bench tests/cuda_test tests/replay_test
      tests/e2e_test)
for b in "${bins[@]}"; do
  [ -x "$build/$b" ] || continue
  cp "$build/$b" "$out/bin/"
  strip --strip-unneeded "$out/bin/$(basename "$b")"
  patchelf --set-rpath '$ORIGIN/../lib' "$out/bin/$(basename "$b")"
done
# The sandbox (eval/sandbox.h) finds bwrap next to the binaries where the machine has none.
if bwrap=$(command -v bwrap); then cp "$bwrap" "$out/bin/"; fi
skip='^(libc|libm|libdl|libpthread|librt|libutil|libresolv|ld-linux-x86-64|linux-vdso|libcuda|libnvrtc|libnvrtc-builtins|libcublas|libcublasLt|libcupti|libnvidia-ml)\.so'
for b in "$out"/bin/*; do
  ldd "$b" | awk '/=> \//{print $1" "$3}' | while read -r name path; do
    if ! [[ $name =~ $skip ]] && [ ! -e "$out/lib/$name" ]; then cp -L "$path" "$out/lib/$name"; fi
  done
done
for l in "$out"/lib/*; do patchelf --set-rpath '$ORIGIN' "$l" 2>/dev/null || true; done
cat > "$out/env.sh" <<'ENV'
# Source this: puts the bundle's binaries on PATH and points ARC_HOME at the tree above it.
_arc_bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export PATH="$_arc_bundle/bin:$PATH"
export ARC_HOME=${ARC_HOME:-$(dirname "$_arc_bundle")}
for _d in /usr/local/cuda/lib64 /usr/local/cuda/lib /usr/local/cuda/targets/x86_64-linux/lib; do
  [ -d "$_d" ] && export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:+$LD_LIBRARY_PATH:}$_d"
done
unset _d
ENV
du -sh "$out" | awk '{print "bundle: "$1" in '"$out"'"}'
