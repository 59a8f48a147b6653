#!/usr/bin/env bash
# What the GPU kit (benches/gpu/run.sh, benches/gpu/kit.py) needs in build-gpu/ besides the
# binaries of scripts/gpu-bundle.sh, which calls this script at its end (it can also be run on
# its own after it). Runs here, where the registry and the peers' sources are; the GPU machine
# has neither.
#
#   build-gpu/peers/cufinufft-2.5.1/   the cuFINUFFT 2.5.1 source (copied from
#                                      $FARFIELD_PEERS_DIR); run.sh builds it there once
#   build-gpu/whl/                     OpenMM wheels for the GPU machine's Python 3.12:
#                                      openmm==$OPENMM_VERSION (CPU, OpenCL) and its CUDA platform
#                                      (openmm-cuda-12 up to 8.3, openmm-cuda-13 from 8.4); default
#                                      8.4.0.post2, the first with a CUDA 13 platform: the GPU
#                                      machines have CUDA 13 only, and openmm-cuda-12 needs the
#                                      CUDA 12 runtime and cuFFT wheels (hundreds of MiB, more than
#                                      the device machine takes); a failed download is reported
#                                      and skipped
#   build-gpu/ewald-ref/jac_dhfr/      the reference field of JAC DHFR (the classic Ewald sum at
#                                      tol 1e-8: field.npy, potential.npy, reference.json), computed
#                                      once here with the bundled CLI (about 15 s on 2 cores)
#   build-gpu/bundle-info.json         the commit the binaries were built from (and whether the
#                                      tree had uncommitted changes), the date, the CLI's version
#
# The device machine takes at most 64 MiB of working tree and carried folders together. When
# the tracked files and build-gpu/ exceed 60 MiB, this script also writes build-gpu-carry/
# (git-ignored): the binaries, the peer source and the reference packed as bins.tar.xz, and the
# wheels; carry that folder instead of build-gpu/ and run.sh unpacks it into build-gpu/.
#
# Usage: bash benches/gpu/bundle-extras.sh        (from anywhere; after scripts/gpu-bundle.sh)
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
cd "$ROOT"
OUT=build-gpu
OPENMM_VERSION=${OPENMM_VERSION:-8.4.0.post2}
mkdir -p "$OUT"
say() { echo "bundle-extras: $*"; }

# 1. the cuFINUFFT source, inside the tree (only the repository travels to the GPU machine)
PEERS=${FARFIELD_PEERS_DIR:-}
if [[ -n "$PEERS" && -f "$PEERS/cufinufft-2.5.1/CMakeLists.txt" ]]; then
  rm -rf "$OUT/peers/cufinufft-2.5.1"
  mkdir -p "$OUT/peers"
  cp -r "$PEERS/cufinufft-2.5.1" "$OUT/peers/"
  say "cuFINUFFT 2.5.1 source -> $OUT/peers/cufinufft-2.5.1"
else
  say "WARNING: no cuFINUFFT 2.5.1 source (set FARFIELD_PEERS_DIR to the folder holding cufinufft-2.5.1/): the NUFFT will run without its peer"
fi

# 2. OpenMM wheels (one version of each; pip matches the platform tags exactly)
mkdir -p "$OUT/whl"
major_minor=$(echo "$OPENMM_VERSION" | awk -F. '{ printf "%d%02d", $1, $2 }')
if ((major_minor >= 804)); then cuda_pkg=openmm-cuda-13; else cuda_pkg=openmm-cuda-12; fi
for other in openmm_cuda_12 openmm_cuda_13; do  # one CUDA platform wheel only
  [[ "$other" == "${cuda_pkg//-/_}" ]] || rm -f "$OUT/whl/$other-"*.whl
done
for pkg in "openmm==$OPENMM_VERSION" "$cuda_pkg==$OPENMM_VERSION"; do
  name=${pkg%%==*}
  stem=${name//-/_}
  if ls "$OUT/whl/${stem}-${OPENMM_VERSION}-"*.whl >/dev/null 2>&1; then
    say "$pkg: already in $OUT/whl"
    continue
  fi
  rm -f "$OUT/whl/${stem}-"*.whl
  if python3 -m pip download --quiet --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
       --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
       --platform manylinux2014_x86_64 --platform manylinux_2_34_x86_64 -d "$OUT/whl" "$pkg"; then
    say "$pkg -> $OUT/whl"
  else
    say "WARNING: pip could not download $pkg: the OpenMM rows will be skipped (or lack that platform)"
  fi
done

# 3. the Ewald reference (the benchmark reads it instead of recomputing it on the GPU machine)
BIN=$OUT/farfield
[[ -x "$BIN" ]] || BIN=${CARGO_TARGET_DIR:-$ROOT/target}/release/farfield
DATA=${FARFIELD_DATA_DIR:-$ROOT/data}
REF=$OUT/ewald-ref/jac_dhfr
if [[ -f "$REF/field.npy" && -f "$REF/reference.json" ]]; then
  say "Ewald reference: already in $REF"
elif [[ -x "$BIN" && -f "$DATA/jac_dhfr/positions.npy" ]]; then
  mkdir -p "$REF"
  t0=$(date +%s.%N)
  if line=$("$BIN" ewald --input "$DATA/jac_dhfr" --method direct --tol 1e-8 --threads 0 --repeats 1 --json \
              --out "$REF" 2>/dev/null | tail -1); then
    wall=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
    echo "${line%\}},\"wall_s\":$wall,\"computed_by\":\"benches/gpu/bundle-extras.sh\"}" > "$REF/reference.json"
    say "Ewald reference of JAC DHFR -> $REF ($wall s)"
  else
    rm -rf "$REF"
    say "WARNING: the Ewald reference failed; the benchmark will compute it on the GPU machine"
  fi
else
  say "WARNING: no farfield CLI or no $DATA/jac_dhfr: the Ewald reference is left to the GPU machine"
fi

# 4. what the binaries were built from
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
dirty=false
[[ -n "$(git status --porcelain --untracked-files=no 2>/dev/null)" ]] && dirty=true
version=$("$BIN" --version 2>/dev/null | head -1 || true)
printf '{"commit": "%s", "dirty": %s, "date_utc": "%s", "farfield_version": "%s", "openmm": "%s"}\n' \
  "$commit" "$dirty" "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$version" "$OPENMM_VERSION" > "$OUT/bundle-info.json"

# 5. the size that travels; a packed copy when it is too much
tree=$(git ls-files -z | xargs -0 du -cb 2>/dev/null | awk 'END { print $1 }')
bundle=$(du -sb --exclude=cufinufft-build --exclude=cufinufft-py --exclude=cuda-links "$OUT" | awk '{ print $1 }')
total=$(( (tree + bundle) / 1048576 ))
say "tracked files $((tree / 1048576)) MiB + $OUT/ $((bundle / 1048576)) MiB = $total MiB (the device machine takes 64 MiB)"
if ((total > 60)); then
  CARRY=build-gpu-carry
  rm -rf "$CARRY"
  mkdir -p "$CARRY"
  tar -C "$OUT" --exclude=whl --exclude=cufinufft-build --exclude=cufinufft-py --exclude=cuda-links -cf - . \
    | xz -6 -T0 > "$CARRY/bins.tar.xz"
  cp -r "$OUT/whl" "$CARRY/whl"
  size=$(du -sb "$CARRY" | awk '{ print int($1 / 1048576) }')
  say "too large to carry as it is: carry $CARRY/ ($size MiB) instead of $OUT/; run.sh unpacks it"
fi
exit 0
