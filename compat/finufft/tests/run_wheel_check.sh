#!/usr/bin/env bash
# CTest driver of python_wheel_check.py: run_wheel_check.sh <libfinufft.so> <venv dir>
# Uses <venv dir> when it has finufft 2.5.1, otherwise creates it and pip-installs
# finufft==2.5.1 and numpy; exits 77 (CTest SKIP) when that is not possible (no python3, no
# venv module, no package index).
set -u
lib=$1 venv=$2
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
# one run at a time per environment (scripts/test.sh keeps it in a per-user cache that clones share)
mkdir -p "$(dirname "$venv")" && exec 9>"$venv.lock" && flock 9 || { echo "FAIL: cannot lock $venv.lock"; exit 1; }
have='from importlib.metadata import version; import numpy, finufft; assert version("finufft") == "2.5.1"'
if ! "$venv/bin/python" -c "$have" >/dev/null 2>&1; then
  command -v python3 >/dev/null 2>&1 || { echo "SKIP: no python3"; exit 77; }
  python3 -m venv "$venv" >/dev/null 2>&1 || { echo "SKIP: python3 -m venv failed"; exit 77; }
  "$venv/bin/python" -m pip install -q finufft==2.5.1 numpy >/dev/null 2>&1 \
    || { echo "SKIP: pip could not install finufft==2.5.1 numpy"; exit 77; }
fi
exec "$venv/bin/python" "$here/python_wheel_check.py" "$lib" --skip-code 77
