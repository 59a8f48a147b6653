#!/usr/bin/env bash
# THE test command of farfield (README; .ci/run calls it):
#
#   bash scripts/test.sh
#
#  1. scripts/install-deps.sh            system packages (only the missing ones), cargo check
#  2. cargo test --workspace --release   Rust unit/integration/doc tests, incl. header freshness;
#     then the MPI tests (feature `mpi`, tests/mpi_poisson.rs under mpirun -np 1…4)
#  3. cmake configure + build            the crate through cargo, Fortran module, C/C++/Fortran tests
#  4. ctest                              C, C++, Fortran, static link, valgrind, install + consumer
#  5. scripts/gpu-check.sh               every CUDA kernel compiles (NVRTC) and assembles (ptxas) for
#                                        sm_80,sm_90 without a GPU (skipped, passing, if the wheels
#                                        cannot be installed); the CUDA-on-CPU emulation tests run
#                                        in step 2 (crate gpu-emu)
#
# All steps run even if an earlier test step fails; a summary follows, and the exit status is
# non-zero if any step failed.
#
# One cargo target directory serves both halves: CMake's cargo build uses CARGO_TARGET_DIR
# (default: the workspace target/) and the selection "--workspace --lib --tests", which resolves
# dependency features exactly as `cargo test --workspace` does, so the library compiled by
# `cargo test --release` is reused as is (a plain `-p farfield` build would differ in a few
# dependency features, e.g. either/std, and recompile the crate).
#
# Environment:
#   FARFIELD_BUILD_DIR   CMake build directory (default build/test; reused incrementally)
#   FARFIELD_JOBS        parallel build/test jobs (default: number of CPUs)
#   FARFIELD_VALGRIND    ON/OFF: C tests under valgrind (default ON)
#   CARGO_TARGET_DIR     cargo's target directory (default <repo>/target)
#   FARFIELD_SKIP_DEPS=1 skip the system package step
#   FARFIELD_DATA_DIR    folder of real input data (docs/design.md §11.1); the tests that use it
#                        skip without it
set -uo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if ! command -v cargo >/dev/null 2>&1 && [[ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]]; then
  export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
fi
BUILD_DIR=${FARFIELD_BUILD_DIR:-build/test}
JOBS=${FARFIELD_JOBS:-$(nproc 2>/dev/null || echo 2)}
VALGRIND=${FARFIELD_VALGRIND:-ON}
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$ROOT/target}
export CARGO_TERM_COLOR=${CARGO_TERM_COLOR:-never}

names=() results=() times=()
failed=0
T_START=$(date +%s)

# step <name> <command...>: runs the command, records PASS/FAIL and its duration.
step() {
  local name=$1; shift
  printf '\n==== [%s] %s\n' "$name" "$*"
  local t0=$SECONDS rc=0
  "$@" || rc=$?
  names+=("$name"); times+=($((SECONDS - t0)))
  if ((rc == 0)); then results+=("PASS"); else results+=("FAIL (exit $rc)"); failed=1; fi
  return $rc
}
skip() { names+=("$1"); times+=(0); results+=("SKIPPED ($2)"); failed=1; }

summary() {
  local total=$(( $(date +%s) - T_START ))
  printf '\n==================== farfield test summary ====================\n'
  local i
  for i in "${!names[@]}"; do
    printf '  %-34s %-18s %5ss\n' "${names[$i]}" "${results[$i]}" "${times[$i]}"
  done
  printf '  %-34s %-18s %5ss\n' "total" "" "$total"
  if ((failed)); then
    printf 'RESULT: FAILED\n'
  else
    printf 'RESULT: all tests passed\n'
  fi
}

if ! step "install deps" bash scripts/install-deps.sh; then
  summary
  exit 1
fi
echo "tools: $(rustc --version); $(cmake --version | head -1); gcc $(gcc -dumpfullversion);" \
     "gfortran $(gfortran -dumpfullversion); $(valgrind --version 2>/dev/null || echo 'no valgrind')"
echo "CARGO_TARGET_DIR=$CARGO_TARGET_DIR  build dir=$BUILD_DIR  jobs=$JOBS  valgrind=$VALGRIND"

step "cargo test --workspace --release" cargo test --workspace --release
# the distributed solvers (feature `mpi`): the test launches itself under mpirun -np 1…4
step "cargo test mpi (mpirun -np 1-4)" cargo test --release -p farfield --features mpi --test mpi_poisson --test mpi_ewald

if step "cmake configure" cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
     -DFARFIELD_VALGRIND="$VALGRIND" -DFARFIELD_CARGO_TARGET_DIR="$CARGO_TARGET_DIR" \
     -DFARFIELD_CARGO_ARGS="--workspace;--lib;--tests"; then
  if step "cmake build" cmake --build "$BUILD_DIR" -j "$JOBS"; then
    step "ctest (C, C++, Fortran, valgrind, consumer)" \
      ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
  else
    skip "ctest" "build failed"
  fi
else
  skip "cmake build + ctest" "configure failed"
fi

step "gpu kernel check (NVRTC + ptxas)" bash scripts/gpu-check.sh

summary
exit $failed
