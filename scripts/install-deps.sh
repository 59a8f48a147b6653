#!/usr/bin/env bash
# Installs the system packages farfield's build and tests need, only those that are missing
# (idempotent; a second run changes nothing). Debian/Ubuntu with apt; run as root or with sudo.
#   libfftw3-dev  FFTW 3 (double + single precision, threads libraries)
#   gfortran      Fortran module and tests (optional when building for C/C++ only: FARFIELD_FORTRAN)
#   cmake         C ABI packaging: build, tests, install, consumer test
#   valgrind      C tests under valgrind
#   pkg-config, build-essential (gcc, g++, make)
#   python3-venv  the GPU kernel check's NVRTC/ptxas wheels (scripts/gpu-check.sh) and the peer
#                 benchmarks' virtual environments
#   liblammps-dev, lammps-examples  LAMMPS as a library and its example inputs, for the LAMMPS
#                 driver (examples/lammps) and its tests (skipped without them)
#   lammps        the `lmp` program: LAMMPS's CMake package (from liblammps-dev) declares it as an
#                 imported target and stops any find_package(LAMMPS), QUIET or not, without it
#   libopenmpi-dev, openmpi-bin, libfftw3-mpi-dev  MPI and FFTW's MPI transforms for the
#                 distributed solvers (cargo feature `mpi`, tests/mpi_poisson.rs)
#   libclang-dev  the `mpi` crate generates its MPI bindings with bindgen (libclang)
# It also checks that a Rust toolchain (cargo) is available; it does not install one.
#
# Environment: FARFIELD_SKIP_DEPS=1 skips the package step (e.g. on a machine you don't own).
set -euo pipefail

PKGS=(libfftw3-dev gfortran cmake valgrind pkg-config build-essential python3-venv liblammps-dev lammps-examples lammps
      libopenmpi-dev openmpi-bin libfftw3-mpi-dev libclang-dev)
RUST_MIN="1.89"   # rust-version of the crate (Cargo.toml)

say() { printf '[install-deps] %s\n' "$*"; }

installed() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }

if [[ "${FARFIELD_SKIP_DEPS:-0}" == "1" ]]; then
  say "FARFIELD_SKIP_DEPS=1: not checking system packages"
elif command -v dpkg-query >/dev/null 2>&1 && command -v apt-get >/dev/null 2>&1; then
  missing=()
  for p in "${PKGS[@]}"; do installed "$p" || missing+=("$p"); done
  if ((${#missing[@]} == 0)); then
    say "system packages present: ${PKGS[*]}"
  else
    say "installing missing packages: ${missing[*]}"
    if [[ $(id -u) -eq 0 ]]; then
      SUDO=()
    elif command -v sudo >/dev/null 2>&1; then
      SUDO=(sudo)
    else
      say "ERROR: not root and no sudo; install these packages yourself: ${missing[*]}"
      exit 1
    fi
    export DEBIAN_FRONTEND=noninteractive
    "${SUDO[@]}" apt-get update
    "${SUDO[@]}" apt-get install -y --no-install-recommends "${missing[@]}"
  fi
else
  # Not Debian-like: check the tools and FFTW, tell what is missing.
  say "no apt/dpkg here: checking the tools instead of installing them"
  bad=0
  for t in cc c++ gfortran cmake valgrind pkg-config make; do
    if ! command -v "$t" >/dev/null 2>&1; then say "missing: $t"; bad=1; fi
  done
  if ! pkg-config --exists fftw3 fftw3f 2>/dev/null; then
    say "missing: FFTW 3 development files (fftw3, fftw3f and their _threads libraries)"; bad=1
  fi
  if ((bad)); then say "ERROR: install the missing tools with your package manager"; exit 1; fi
fi

# Rust toolchain: cargo on PATH, or the default rustup location.
if ! command -v cargo >/dev/null 2>&1; then
  if [[ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]]; then
    say "cargo is installed in ${CARGO_HOME:-$HOME/.cargo}/bin but not on PATH; run:"
    say "  export PATH=\"${CARGO_HOME:-$HOME/.cargo}/bin:\$PATH\""
  else
    say "ERROR: cargo not found. Install a Rust toolchain (>= $RUST_MIN), e.g. with rustup"
    say "  (see the Rust project's installation page), then open a new shell or run:"
    say "  export PATH=\"\$HOME/.cargo/bin:\$PATH\""
  fi
  exit 1
fi
rustc_version=$(rustc --version 2>/dev/null | awk '{print $2}')
if [[ -n "$rustc_version" ]] && [[ "$(printf '%s\n%s\n' "$RUST_MIN" "$rustc_version" | sort -V | head -1)" != "$RUST_MIN" ]]; then
  say "ERROR: rustc $rustc_version is older than $RUST_MIN; update it (e.g. rustup update stable)"
  exit 1
fi
say "cargo: $(cargo --version)"
