"""Shared fixtures of the farfield Python tests: the repository's data folder and a seeded
random generator."""

import os
from pathlib import Path

import numpy as np
import pytest

# the repository's data folder (python/tests → ../../data), or FARFIELD_DATA_DIR
DATA = Path(os.environ.get("FARFIELD_DATA_DIR") or Path(__file__).resolve().parents[2] / "data")


@pytest.fixture
def rng():
    return np.random.default_rng(20261202)


def load_system(name):
    """positions (N, 3) nm, charges (N,) e, box (3, 3) nm of data/<name>."""
    d = DATA / name
    return np.load(d / "positions.npy"), np.load(d / "charges.npy"), np.load(d / "box.npy")


def rel_l2(a, b):
    """‖a − b‖₂ / ‖b‖₂."""
    return float(np.linalg.norm(np.ravel(a) - np.ravel(b)) / np.linalg.norm(np.ravel(b)))
