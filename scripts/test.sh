#!/usr/bin/env bash
# THE test command of farfield (README; .ci/run calls it):
#
#   bash scripts/test.sh
#
#  1. scripts/install-deps.sh            system packages (only the missing ones), cargo check
#  2. cmake configure                    with FARFIELD_MPI=ON (the library, tool and tests with MPI),
#     scripts/feature_resolution.py      then, in seconds, that steps 3 and 8 resolve farfield's
#                                        library alike (so it is compiled once)
#  3. cargo test --workspace --release   Rust unit/integration/doc tests, incl. header freshness, and
#        --features farfield/mpi …       the MPI tests (tests/mpi_poisson.rs and tests/mpi_ewald.rs
#                                        under mpirun -np 1…4), with the cargo selection of step 2
#  4. cmake build                        the crate through cargo, Fortran module, C/C++/Fortran tests
#  5. ctest                              C, C++, Fortran, MPI (mpiexec -n 1…4), static link, valgrind,
#                                        install + consumer, examples
#  6. scripts/gpu-check.sh               every CUDA kernel compiles (NVRTC) and assembles (ptxas) for
#                                        sm_80,sm_90 without a GPU (skipped, passing, if the wheels
#                                        cannot be installed), and the occupancy guard (kernels at
#                                        >= 2 blocks/SM in docs/gpu_occupancy.json stay there); the
#                                        CUDA-on-CPU emulation tests run in step 3 (crate gpu-emu)
#  7. benches/gpu/selftest.sh            the GPU measurement kit's own logic, with CPU runs of the
#                                        tool standing in for the device
#  8. python/tests/run_tests.py          the Python package: `pip install ./python` into the
#                                        cached environment `python` (made with the test peers of
#                                        python/tests/requirements.txt), then `pytest python/tests`;
#                                        the extension is built with --features mpi in this
#                                        target directory and links the farfield library step 3
#                                        compiled (python/Cargo.toml's pins), see run_tests.py
#
# All steps run even if an earlier test step fails; a summary follows, and the exit status is
# non-zero if any step failed.
#
# One cargo target directory serves all steps, and farfield's library is compiled once in all
# (with MPI), besides its unit-test binary; the Python extension (a workspace member left out of
# the cargo steps with --exclude) is built last, on that compile. Any cargo command that
# resolves features differently compiles that library again (and relinks the C library, whose
# file names carry no hash, in place). Hence: CMake's cargo build (step 4: the workspace's
# libraries and the tool, with `--features farfield/mpi`) gets the selection "--workspace
# --exclude farfield-python --lib --test mpi_poisson" (a test target, so dev-dependencies take part in feature resolution as in
# `cargo test`), CMake writes the package/feature part of its whole command to
# <build>/cargo-selection.txt, and step 3 runs `cargo test` with exactly that: step 4 then finds
# farfield's library Fresh, as do the tree without Fortran that CTest builds (fortran_optional)
# and step 6, which uses the tool step 4 built instead of building its own.
#
# Environment:
#   FARFIELD_BUILD_DIR   CMake build directory (default build/test; reused incrementally)
#   FARFIELD_JOBS        parallel build/test jobs (default: number of CPUs)
#   FARFIELD_VALGRIND    ON/OFF: the C boundary tests under valgrind (default ON)
#   FARFIELD_VENV_CACHE  folder of the Python tests' virtual environments (default
#                        ${XDG_CACHE_HOME:-~/.cache}/farfield/venvs; each is locked while in use)
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
# the Python virtual environments of steps 5, 6 and 8 (peers and tools pinned or probed by their
# scripts), made on first use and then reused by every clone of this user, as pip's and cargo's
# download caches are: about 2 minutes of installs per run otherwise
VENV_CACHE=${FARFIELD_VENV_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/farfield/venvs}
export FARFIELD_CUDA_VENV=${FARFIELD_CUDA_VENV:-$VENV_CACHE/cuda}
export FARFIELD_PY_VENV=${FARFIELD_PY_VENV:-$VENV_CACHE/python}

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

TEST_NAME="cargo test --workspace --release (MPI on)"
# the Python extension's cargo features: those of the cargo steps' farfield (MPI on), so that it
# links the library they compile (checked before they run, scripts/feature_resolution.py)
PY_FEATURES=mpi
if step "cmake configure" cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
     -DFARFIELD_VALGRIND="$VALGRIND" -DFARFIELD_CARGO_TARGET_DIR="$CARGO_TARGET_DIR" \
     -DFARFIELD_TEST_VENV_DIR="$VENV_CACHE" \
     -DFARFIELD_MPI=ON -DFARFIELD_CARGO_ARGS="--workspace;--exclude;farfield-python;--lib;--test;mpi_poisson"; then
  # every Rust test, the distributed solvers' too (feature `mpi`: those tests launch themselves
  # under mpirun -np 1…4), with CMake's selection, so that this compile of the library is the
  # one the build reuses; --no-fail-fast: a failing test binary does not hide the later ones
  read -ra SELECTION < "$BUILD_DIR/cargo-selection.txt"
  # seconds, no compile: the Python step below must find the library this step compiles
  FARFIELD_PY_FEATURES=$PY_FEATURES \
    step "one library compile (features)" python3 scripts/feature_resolution.py "${SELECTION[@]}"
  # --timings: the build's per-unit profile, target/cargo-timings/cargo-timing.html
  step "$TEST_NAME" cargo test --release --no-fail-fast --timings "${SELECTION[@]}"
  if step "cmake build" cmake --build "$BUILD_DIR" -j "$JOBS"; then
    # the kernel check runs the tool this build made (no cargo build of its own)
    export FARFIELD_CLI_BIN="$CARGO_TARGET_DIR/release/farfield"
    step "ctest (C, C++, Fortran, MPI, valgrind, consumer)" \
      ctest --test-dir "$BUILD_DIR" --output-on-failure -j "$JOBS"
  else
    skip "ctest" "build failed"
  fi
else
  skip "cmake build + ctest" "configure failed"
  step "$TEST_NAME" cargo test --workspace --exclude farfield-python --release --no-fail-fast \
    --features farfield/mpi --features farfield-cli/mpi
fi

step "gpu kernel check (NVRTC + ptxas)" bash scripts/gpu-check.sh
step "gpu kit self-test (no GPU)" bash benches/gpu/selftest.sh
# the extension on the library compiled above: same target directory, same features (run_tests.py
# fails if pip's build compiles farfield's library again)
FARFIELD_PY_TARGET_DIR=$CARGO_TARGET_DIR FARFIELD_PY_FEATURES=$PY_FEATURES FARFIELD_PY_REUSE=1 \
  step "python package (pip install, pytest)" python3 python/tests/run_tests.py

summary
exit $failed
