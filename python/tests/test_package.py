"""Package-level properties: the GIL is released during computation, errors carry the
library's status code and message, public items are documented, the extension crate's lock file
pins the root workspace's versions, and the package answers the CUDA question without failing."""

import inspect
import threading
import time
import tomllib
from pathlib import Path

import numpy as np
import pytest

import farfield
from farfield import ewald, fmm, nufft, poisson, spread

ROOT = Path(__file__).resolve().parents[2]


def test_gil_is_released_during_computation(rng):
    src = rng.uniform(0, 1, (200_000, 3))
    q = rng.standard_normal(len(src))
    plan = fmm.Plan(tol=1e-6, nthreads=1)
    window = []

    def work():
        t0 = time.perf_counter()
        plan.evaluate(src, q)
        window.extend([t0, time.perf_counter()])

    t = threading.Thread(target=work)
    t.start()
    # the longest stretch in which this thread could not run: with the GIL held by the call it
    # would span the whole call
    last = time.perf_counter()
    gap = 0.0
    while t.is_alive():
        now = time.perf_counter()
        gap = max(gap, now - last)
        last = now
    t.join()
    duration = window[1] - window[0]
    assert duration > 0.1
    assert gap < 0.5 * duration, (gap, duration)


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


def test_extension_is_built_with_the_root_workspace_lock_file():
    # one lock file: the extension links the same dependency versions as the C library
    members = tomllib.loads((ROOT / "Cargo.toml").read_text())["workspace"]["members"]
    assert "python" in members
    assert not (ROOT / "python" / "Cargo.lock").exists(), "python/ has its own Cargo.lock: the root one is used"
    locked = {p["name"] for p in tomllib.loads((ROOT / "Cargo.lock").read_text())["package"]}
    assert {"farfield-python", "pyo3", "numpy"} <= locked


def test_cuda_available_answers():
    assert farfield.cuda_available() in (True, False)


def test_version_matches_the_crate():
    crate = tomllib.loads((ROOT / "Cargo.toml").read_text())["package"]["version"]
    assert farfield.__version__ == crate


def test_type_stubs_match_the_native_module():
    """Every class and method of farfield/_farfield.pyi exists in the native module with the
    stub's parameter names, in order."""
    import ast
    import farfield._farfield as native
    tree = ast.parse((ROOT / "python" / "farfield" / "_farfield.pyi").read_text())
    checked = 0
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            cls = getattr(native, node.name)
            for fn in node.body:
                if isinstance(fn, ast.FunctionDef):
                    obj = cls if fn.name == "__init__" else getattr(cls, fn.name)
                    runtime = [p for p in inspect.signature(obj).parameters if p != "self"]
                    assert [a.arg for a in fn.args.args][1:] == runtime, f"{node.name}.{fn.name}"
                    checked += 1
        elif isinstance(node, ast.FunctionDef):
            assert callable(getattr(native, node.name))
    assert checked >= 15
