"""Package-level properties: the GIL is released during computation, errors carry the
library's status code and message, public items are documented, the extension crate's lock file
pins the root workspace's versions, and the package answers the CUDA question without failing."""

import inspect
import threading
import tomllib
from pathlib import Path

import numpy as np
import pytest

import farfield
from farfield import ewald, fmm, nufft, poisson, spread

ROOT = Path(__file__).resolve().parents[2]


def test_gil_is_released_during_computation(rng):
    src = rng.uniform(0, 1, (400_000, 3))
    q = rng.standard_normal(len(src))
    plan = fmm.Plan(tol=1e-8, nthreads=1)
    done = threading.Event()

    def work():
        plan.evaluate(src, q)
        done.set()

    t = threading.Thread(target=work)
    t.start()
    count = 0
    while not done.is_set():
        count += 1
    t.join()
    # with the GIL held for the whole call this loop could run only before and after it
    assert count > 10_000


def test_errors_carry_code_and_message():
    with pytest.raises(farfield.InvalidArgumentError) as e:
        fmm.evaluate(np.zeros((2, 3)), np.ones(2), tol=5.0)
    assert isinstance(e.value, ValueError) and isinstance(e.value, farfield.FarfieldError)
    assert e.value.code == 107 and "tol" in str(e.value)


@pytest.mark.parametrize("mod", [nufft, spread, ewald, poisson, fmm])
def test_public_items_are_documented(mod):
    assert mod.__doc__ and len(mod.__doc__) > 200
    for name in mod.__all__:
        obj = getattr(mod, name)
        if callable(obj) and not name.isupper():
            assert obj.__doc__ and len(obj.__doc__.strip()) > 40, name
            if inspect.isclass(obj):
                for m, f in inspect.getmembers(obj, callable):
                    if not m.startswith("_"):
                        assert f.__doc__, f"{name}.{m}"


def test_extension_lock_file_pins_the_root_workspace_versions():
    root = {p["name"]: p["version"] for p in tomllib.loads((ROOT / "Cargo.lock").read_text())["package"]}
    ext = {p["name"]: p["version"] for p in tomllib.loads((ROOT / "python" / "Cargo.lock").read_text())["package"]}
    differ = {k: (root[k], v) for k, v in ext.items() if k in root and root[k] != v}
    assert not differ, f"python/Cargo.lock differs from Cargo.lock (copy Cargo.lock and re-resolve): {differ}"


def test_cuda_available_answers():
    assert farfield.cuda_available() in (True, False)


def test_version_matches_the_crate():
    crate = tomllib.loads((ROOT / "Cargo.toml").read_text())["package"]["version"]
    assert farfield.__version__ == crate
