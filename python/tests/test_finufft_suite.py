"""FINUFFT 2.5.1's own Python tests (test_finufft_plan.py and test_finufft_simple.py of the
folder finufft/test of its Python package sources, with their utils.py) run against farfield.nufft: a shim package named
`finufft` that re-exports farfield.nufft is put first on the path of a pytest subprocess.

FINUFFT's sdist on the package index carries no tests, so they are taken from
FINUFFT_TESTS_DIR (a folder holding those three files), else from a shallow clone of the
FINUFFT repository at tag v2.5.1 cached in .venv-python/finufft-v2.5.1 (FINUFFT is
Apache-2.0; nothing of it is stored in this repository). Without either (no network for git),
the test is skipped with that reason.
"""

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TAG = "v2.5.1"
FILES = ("test_finufft_plan.py", "test_finufft_simple.py", "utils.py")
REPO = "https://github.com/flatironinstitute/finufft"
# the tests' folder in that repository
SUBDIR = ("python", "finufft", "test")


def finufft_tests():
    """The folder with FINUFFT's test files, or a reason why there is none."""
    given = os.environ.get("FINUFFT_TESTS_DIR")
    if given:
        return Path(given), None
    cache = ROOT / ".venv-python" / f"finufft-{TAG}"
    tests = cache.joinpath(*SUBDIR)
    if all((tests / f).exists() for f in FILES):
        return tests, None
    try:
        subprocess.run(["git", "clone", "--quiet", "--depth", "1", "--branch", TAG, "--filter=blob:none", "--sparse", REPO,
                        str(cache)], check=True, capture_output=True, text=True, timeout=120)
        subprocess.run(["git", "-C", str(cache), "sparse-checkout", "set", "/".join(SUBDIR)], check=True, capture_output=True,
                       text=True, timeout=120)
    except (subprocess.CalledProcessError, subprocess.TimeoutExpired, OSError) as e:
        err = getattr(e, "stderr", "") or str(e)
        return None, f"FINUFFT {TAG}'s Python tests are not in its sdist and could not be fetched with git ({err.strip()[:200]}); set FINUFFT_TESTS_DIR"
    return tests, None


def test_finufft_own_python_tests_pass(tmp_path):
    tests, why = finufft_tests()
    if tests is None:
        pytest.skip(why)
    missing = [f for f in FILES if not (tests / f).exists()]
    assert not missing, f"{tests} lacks {missing}"
    shim = tmp_path / "shim" / "finufft"
    shim.mkdir(parents=True)
    (shim / "__init__.py").write_text("from farfield.nufft import *  # noqa: F401,F403\nfrom farfield.nufft import Plan, __all__  # noqa: F401\n"
                                      "__version__ = '2.5.1'\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(shim.parent), str(tests)]))
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "--rootdir", str(tests),
                        *(str(tests / f) for f in FILES if f.startswith("test_"))],
                       env=env, cwd=tmp_path, capture_output=True, text=True)
    # the suite must have run against farfield, not against an installed finufft
    check = subprocess.run([sys.executable, "-c", "import finufft, farfield.nufft; assert finufft.Plan is farfield.nufft.Plan"],
                           env=env, cwd=tmp_path)
    assert check.returncode == 0
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
    assert " passed" in r.stdout
