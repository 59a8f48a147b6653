#!/usr/bin/env bash
# Runs the farfield demo (the `demo` subcommand of the CLI, crate farfield-cli), after making
# sure the system packages are installed. Extra arguments go to `farfield demo`:
#   bash scripts/demo.sh [demo options...]
# With FARFIELD_DATA_DIR naming the folder of real input data (docs/design.md §11.1) the demo
# reconstructs its MRI slice and computes JAC DHFR; without it, a phantom and a crystal.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$ROOT"
if ! command -v cargo >/dev/null 2>&1 && [[ -x "${CARGO_HOME:-$HOME/.cargo}/bin/cargo" ]]; then
  export PATH="${CARGO_HOME:-$HOME/.cargo}/bin:$PATH"
fi
bash scripts/install-deps.sh
exec cargo run --release -p farfield-cli -- demo "$@"
