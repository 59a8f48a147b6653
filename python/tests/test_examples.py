"""Runs every script of examples/python (with small sizes) and checks what it reports."""

import json
import subprocess
import sys
from pathlib import Path

EX = Path(__file__).resolve().parents[2] / "examples" / "python"


def run(name, *args):
    out = subprocess.run([sys.executable, str(EX / name), *args, "--json"], capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def test_mri_radial():
    r = run("mri_radial.py", "--n", "64", "--iters", "10")
    assert r["cg_rel_error"] < r["adjoint_rel_error"]
    assert r["cg_rel_error"] < 0.15


def test_spme_dhfr():
    r = run("spme_dhfr.py", "--tol", "1e-5")
    assert r["atoms"] == 23558 and abs(r["net_charge"] + 11) < 1e-3
    for m in ("spme", "spectral"):
        assert r["methods"][m]["force_rel_rms_error"] < 1e-5
        assert r["methods"][m]["energy_rel_error"] < 1e-5


def test_fmm_plummer():
    r = run("fmm_plummer.py", "--n", "20000", "--tol", "1e-6")
    assert r["potential_rel_error"] < 1e-6 and r["field_rel_error"] < 1e-6
