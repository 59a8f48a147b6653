#!/usr/bin/env bash
# GPU kernel check without a GPU (docs/design.md §5.3, check 1), called by scripts/test.sh:
#   every CUDA kernel compiles with NVRTC for sm_80 and sm_90 and the PTX assembles with ptxas;
#   and the occupancy guard: `farfield gpu check --resources` (registers and shared memory from
#   ptxas -v at the default plans' launch shapes) against docs/gpu_occupancy.json, failing when a
#   kernel with >= 2 blocks per multiprocessor there drops below 2 (scripts/gpu_occupancy.py).
#   FARFIELD_OCCUPANCY_WRITE=1 rewrites that baseline and docs/gpu_occupancy.md instead.
#
# NVRTC and ptxas come from the PyPI wheels nvidia-cuda-nvrtc-cu12 and nvidia-cuda-nvcc-cu12
# (12.x: their PTX 8.8 is accepted by 12.9-era drivers), installed into a git-ignored virtual
# environment (default <repo>/.venv-cuda, or FARFIELD_CUDA_VENV). If the wheels cannot be
# installed (no Python venv support, no package index), the check is SKIPPED with a message and
# this script exits 0; if they are there, any kernel that fails to compile or assemble fails it.
#
# Environment: FARFIELD_CUDA_VENV, FARFIELD_GPU_ARCHS (default sm_80,sm_90), CARGO_TARGET_DIR,
# FARFIELD_CLI_BIN (a `farfield` tool already built, e.g. by scripts/test.sh's CMake build: used
# as is instead of `cargo build --release --workspace --bins`, which would recompile the
# library with another feature selection).
set -uo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
VENV=${FARFIELD_CUDA_VENV:-$ROOT/.venv-cuda}
ARCHS=${FARFIELD_GPU_ARCHS:-sm_80,sm_90}
TARGET=${CARGO_TARGET_DIR:-$ROOT/target}

find_libs() {
  NVRTC=$(ls "$VENV"/lib/python3*/site-packages/nvidia/cuda_nvrtc/lib/libnvrtc.so.12 2>/dev/null | head -1)
  PTXAS=$(ls "$VENV"/lib/python3*/site-packages/nvidia/cuda_nvcc/bin/ptxas 2>/dev/null | head -1)
}
# one installer at a time per environment (scripts/test.sh keeps it in a per-user cache)
mkdir -p "$(dirname "$VENV")" && exec 9>"$VENV.lock" && flock 9
find_libs
if [[ -z "$NVRTC" || -z "$PTXAS" ]]; then
  echo "gpu-check: installing nvidia-cuda-nvrtc-cu12 and nvidia-cuda-nvcc-cu12 into $VENV"
  if ! { [[ -x "$VENV/bin/pip" ]] || python3 -m venv "$VENV"; } ||
     ! "$VENV/bin/pip" install --quiet "nvidia-cuda-nvrtc-cu12>=12.0,<13" "nvidia-cuda-nvcc-cu12>=12.0,<13"; then
    echo "gpu-check: SKIPPED — the NVRTC/ptxas wheels could not be installed (python3 -m venv + pip needed)"
    exit 0
  fi
  find_libs
  if [[ -z "$NVRTC" || -z "$PTXAS" ]]; then
    echo "gpu-check: SKIPPED — wheels installed but libnvrtc.so.12 / ptxas not found under $VENV"
    exit 0
  fi
fi
echo "gpu-check: NVRTC $NVRTC"
echo "gpu-check: ptxas $PTXAS"
if [[ -n "${FARFIELD_CLI_BIN:-}" && -x "${FARFIELD_CLI_BIN}" ]]; then
  CLI=$FARFIELD_CLI_BIN
else
  cargo build --release --workspace --bins || exit 1
  CLI="$TARGET/release/farfield"
fi
echo "gpu-check: $CLI"
out=$(FARFIELD_NVRTC_LIB="$NVRTC" FARFIELD_PTXAS="$PTXAS" "$CLI" gpu check --arch "$ARCHS" --resources --json)
rc=$?
printf '%s\n' "$out" | sed '$d'
last=$(printf '%s\n' "$out" | tail -1)
if ((rc != 0)); then
  echo "gpu-check: FAILED (exit $rc)"
  exit 1
fi
summary=$(mktemp) && trap 'rm -f "$summary"' EXIT
printf '%s\n' "$last" > "$summary"
# the summary must say every kernel compiled and assembled for every architecture (read from a
# file: with the width-specialised modules it is longer than one command-line argument may be)
python3 - "$summary" <<'PY' || exit 1
import json, sys
r = json.loads(open(sys.argv[1]).read())
want = r["kernels"] * len(r["archs"])
ok = r["ok"] and r["kernels"] > 0 and r["compiled"] == want and r["assembled"] == want
print(f"gpu-check: {r['kernels']} kernels x {len(r['archs'])} archs, {r['compiled']} compiled, {r['assembled']} assembled: {'OK' if ok else 'FAILED'}")
sys.exit(0 if ok else 1)
PY
if [[ -n "${FARFIELD_OCCUPANCY_WRITE:-}" ]]; then
  python3 scripts/gpu_occupancy.py write "$summary"
else
  python3 scripts/gpu_occupancy.py check "$summary"
fi
