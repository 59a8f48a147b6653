#!/usr/bin/env bash
# mri-nufft 1.5.1's own test suite on its `finufft` backend, run on the FINUFFT 2.5.1 PyPI
# wheel with the wheel's bundled libfinufft.so replaced by ours (or, with `wheel`, as shipped).
#   run_mrinufft_check.sh <our libfinufft.so> <venv dir> [wheel]
# Uses <venv dir> when it has the pinned packages, otherwise creates it and pip-installs them;
# unlike run_wheel_check.sh this FAILS (exit 2) when python3, venv or pip cannot provide them.
# The tests come from mri-nufft 1.5.1's sdist, downloaded once into <venv dir>/mrinufft-src.
# Selection: upstream mri-nufft CI's CPU job, `pytest -k operators --backend finufft --ref finufft`
# (the tests of its operators folder; the other backends' cases skip), less the 8 cases of
# `test_pinv_solver[...-cg]` with n_trans = 2: there mri-nufft's `get_lipschitz_cst` sets
# n_coils = n_batchs = 1 on a plan of n_trans = 2, so `_op_calibless` loops (1 // 2) = 0 times
# and returns its `np.empty` buffer unwritten; the power method and the step 1/L then run on
# uninitialised memory (L is inf or NaN with FINUFFT's own library too). Whenever that memory
# holds a NaN this library refuses the input with 21, where FINUFFT computes NaN with status 0
# and the test, which checks only shapes, passes. Not a test of the NUFFT either way.
# The cases run in parallel (pytest-xdist, one worker per core) with one NUFFT thread each
# (OMP_NUM_THREADS, which the library honours as FINUFFT does, unless already set): on two
# cores 247 s in one pytest process, 173 s so (benches/results/test_command_2026-12-04.json).
# Exit code = pytest's.
# Extra pytest options can be passed through PYTEST_ADDOPTS (e.g. --junitxml=FILE, -x).
set -u
lib=$1 venv=$2 mode=${3:-ours}
# one run at a time per environment (scripts/test.sh keeps it in a per-user cache that clones share)
mkdir -p "$(dirname "$venv")" && exec 9>"$venv.lock" && flock 9 || { echo "FAIL: cannot lock $venv.lock"; exit 2; }
[ "$mode" = wheel ] || [ -f "$lib" ] || { echo "FAIL: no library at $lib"; exit 2; }
pins="mri-nufft==1.5.1 finufft==2.5.1 numpy==2.4.6 scipy==1.17.1 matplotlib==3.11.2 tqdm==4.70.1
      pytest==7.4.4 pytest-cases==3.10.1 pytest-xdist==3.6.1"
py=$venv/bin/python
# the venv: reused when mri-nufft 1.5.1, finufft 2.5.1, pytest, pytest-cases and pytest-xdist
# import there
have='from importlib.metadata import version as v; import mrinufft, finufft, pytest, pytest_cases, xdist
assert v("mri-nufft") == "1.5.1" and v("finufft") == "2.5.1" and v("pytest-xdist") == "3.6.1"'
if ! "$py" -c "$have" >/dev/null 2>&1; then
  python3 -m venv "$venv" || { echo "FAIL: python3 -m venv $venv failed"; exit 2; }
  # shellcheck disable=SC2086  # $pins is a word list
  "$py" -m pip install -q $pins || { echo "FAIL: pip could not install $pins"; exit 2; }
fi
# the test suite: mri-nufft 1.5.1's sdist (tests/ and its conftest.py are not in the wheel)
src=$venv/mrinufft-src
if [ ! -f "$src/mri_nufft-1.5.1/tests/conftest.py" ]; then
  mkdir -p "$src"
  "$py" -m pip download -q --no-deps --no-binary :all: mri-nufft==1.5.1 -d "$src" \
    && tar -xzf "$src/mri_nufft-1.5.1.tar.gz" -C "$src" \
    || { echo "FAIL: could not download and unpack the mri-nufft 1.5.1 sdist"; exit 2; }
fi
# a copy of the installed finufft package whose libfinufft.so (loaded by finufft/_finufft.py
# from the package folder) is ours; finufft.libs/ beside it keeps the wheel's RPATH
# $ORIGIN/../finufft.libs (its libgomp) working for the `wheel` run
pkg=$("$py" -c 'import finufft, os; print(os.path.dirname(finufft.__file__))') || exit 2
tmp=$(mktemp -d) && trap 'rm -rf "$tmp"' EXIT
cp -r "$pkg" "$tmp/finufft" && rm -rf "$tmp/finufft/__pycache__"
[ -d "$pkg/../finufft.libs" ] && cp -r "$pkg/../finufft.libs" "$tmp/"
[ "$mode" = wheel ] || cp "$lib" "$tmp/finufft/libfinufft.so" || exit 2
export PYTHONPATH=$tmp${PYTHONPATH:+:$PYTHONPATH}
# fail here, not as skips: mri-nufft reports a backend whose import fails as unavailable
loaded=$("$py" -c 'import finufft; print(finufft.__file__)') && [ "${loaded#"$tmp"/}" != "$loaded" ] \
  || { echo "FAIL: the copied finufft package (with $mode libfinufft.so) does not import"; exit 2; }
echo "finufft package: $loaded ($mode library)"
sha256sum "$tmp/finufft/libfinufft.so"
cd "$src/mri_nufft-1.5.1" || exit 2
uninit=() t=tests  # node ids relative to the sdist's root
for traj in nyquist_radial2D nyquist_radial3D; do
  for case in 1-4-2-True 1-4-2-False 3-4-2-True 3-4-2-False; do
    uninit+=(--deselect "$t/operators/test_batch.py::test_pinv_solver[backend=finufft-$traj-$case-numpy-cg]")
  done
done
OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} "$py" -m pytest -n auto -k operators "${uninit[@]}" \
  --backend finufft --ref finufft -p no:cacheprovider -q -rfE --disable-pytest-warnings
