#!/usr/bin/env bash
# Builds what a GPU machine without a Rust toolchain, FFTW or registry access needs to run
# farfield's CUDA path and its benchmarks (docs/design.md §5.5), into build-gpu/ (git-ignored):
#
#   build-gpu/libfarfield.so, libfarfield.so.<MAJOR>   the C library, stripped
#   build-gpu/farfield                                 the command-line tool, stripped
#   build-gpu/libfftw3*.so.3                           FFTW (double, single, threads) beside them
#   build-gpu/libcufinufft.so                          the cuFINUFFT drop-in (compat/cufinufft), stripped
#   build-gpu/env.sh                                   `source` it there: LD_LIBRARY_PATH, PATH
#   build-gpu/py/farfield-*.whl                        the Python package (its device tests are the
#                                                      kit's last step), when .venv-python has maturin
#   build-gpu/peers, whl, ewald-ref, bundle-info.json  what the GPU kit needs besides
#                                                      (benches/gpu/bundle-extras.sh)
#
# Usage: FARFIELD_PEERS_DIR=<folder with cufinufft-2.5.1/> bash scripts/gpu-bundle.sh
#        (then carry build-gpu/, or build-gpu-carry/ when it says so, with the working tree)
# On the GPU machine: `bash benches/gpu/run.sh [--quick]` (the measurement kit), or
# `source build-gpu/env.sh; farfield gpu check`, or
# `python3 benches/peers/nufft_vs_cufinufft.py --cufinufft-src DIR` (it finds build-gpu/ itself), or
# `python3 compat/cufinufft/tests/python_package_check.py --cufinufft-py DIR/python/cufinufft`.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
OUT=build-gpu
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
cargo build --release -p farfield-clib -p farfield-cli
mkdir -p "$OUT"
MAJOR=$(sed -n 's/^version = "\([0-9]*\)\..*/\1/p' Cargo.toml | head -1)
install -m 755 "$CARGO_TARGET_DIR/release/libfarfield.so" "$OUT/libfarfield.so"
install -m 755 "$CARGO_TARGET_DIR/release/farfield" "$OUT/farfield"
strip --strip-unneeded "$OUT/libfarfield.so" "$OUT/farfield"
ln -sf libfarfield.so "$OUT/libfarfield.so.$MAJOR"
# libcufinufft.so is linked by CMake (soname, version script: docs/design.md §7.3)
cmake -S . -B build-gpu-cmake -DCMAKE_BUILD_TYPE=Release -DFARFIELD_CARGO_TARGET_DIR="$CARGO_TARGET_DIR" \
  -DFARFIELD_FINUFFT_COMPAT=OFF >/dev/null
cmake --build build-gpu-cmake --target cufinufft_compat >/dev/null
install -m 755 build-gpu-cmake/lib/cufinufft/libcufinufft.so "$OUT/libcufinufft.so"
strip --strip-unneeded "$OUT/libcufinufft.so"
for lib in libfftw3 libfftw3f libfftw3_threads libfftw3f_threads; do
  # (no early exit in awk: ldconfig would get SIGPIPE, fatal under pipefail)
  src=$(ldconfig -p | awk -v n="$lib.so.3" '$1 == n && !f { f = $NF } END { print f }')
  [[ -n "$src" ]] || { echo "gpu-bundle: $lib.so.3 not found (install libfftw3-dev)" >&2; exit 1; }
  cp -L "$src" "$OUT/$lib.so.3"
done
cat > "$OUT/env.sh" <<'ENV'
# source this file on the GPU machine: farfield's bundle on the loader path and PATH
_ff_dir=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$_ff_dir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PATH="$_ff_dir:$PATH"
unset _ff_dir
ENV
# the Python package, built by the test environment's maturin (python/tests/run_tests.py makes
# .venv-python) in the workspace's target directory, as run_tests.py builds it
MATURIN=${MATURIN:-$ROOT/.venv-python/bin/maturin}
rm -rf "$OUT/py"
if [[ -x $MATURIN ]]; then
  CARGO_TARGET_DIR=${FARFIELD_PY_TARGET_DIR:-$CARGO_TARGET_DIR} "$MATURIN" build --release -q -m python/Cargo.toml -o "$OUT/py"
else
  echo "gpu-bundle: no maturin at $MATURIN (run python3 python/tests/run_tests.py once): no wheel, the kit skips the Python device tests" >&2
fi
du -sh "$OUT" | awk '{ print "gpu-bundle: " $1 " in build-gpu/" }'
bash benches/gpu/bundle-extras.sh
