#!/usr/bin/env bash
# Self-test of the GPU kit (benches/gpu/kit.py --selftest): no GPU, a few seconds. Checks the
# kit's case list, timeouts, JSON schema and tables, and reads real CPU runs of the farfield CLI
# through the kit's parsers, so that a change of the CLI's JSON or of a benchmark script's
# options fails here. Needs python3 and the CLI ($FARFIELD_BIN, $FARFIELD_CLI_BIN,
# $CARGO_TARGET_DIR/release/farfield or target/release/farfield); fails without them.
#
# Usage: bash benches/gpu/selftest.sh        (exit status 0 when every check passed)
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
command -v python3 >/dev/null || { echo "gpu kit self-test: python3 not found" >&2; exit 1; }
exec python3 "$ROOT/benches/gpu/kit.py" --selftest
