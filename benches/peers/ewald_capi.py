"""farfield's Ewald plan through its C API (ctypes) with host arrays: the evaluation a CPU-side
MD code makes, positions in and forces out on the host, on the CPU or on a CUDA device.

Used by `ewald_vs_openmm.py --ours-host` to time "forces on the host" for ours the way OpenMM's
`getState(getForces=True)` is timed; the `farfield ewald` CLI times device-resident arrays
instead. NumPy is the only dependency.

    from ewald_capi import EwaldCapi
    ew = EwaldCapi("build-gpu/libfarfield.so")
    r = ew.run(x, q, box, method="spme", tol=1e-5, backend="cuda", prec="f32", repeats=20)
    r["times_s"], r["field"], r["energy"], r["params"]

Each call of `run` makes a plan (timed as `plan_s`), evaluates once as a warm-up (the first
evaluation allocates the device buffers), then `repeats` timed evaluations of energy,
potentials and fields (each `farfield_ewald_execute` copies the inputs in and the results out
and synchronises the device before it returns). With `debug_lines=True` one more plan is made
with `opts.debug = 1` and evaluated twice, untimed, and the library's debug lines of the second
evaluation (on CUDA: the host time of the upload, evaluation, download and copy-out stages,
and the device phases of the k-space and real-space parts) are returned as `debug_lines`.
"""

import ctypes
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from peer_env import stderr_of  # noqa: E402

METHODS = {"spectral": 0, "spme": 1, "direct": 2}
BACKENDS = {"cpu": 1, "cuda": 2}
GPU_PRECISION = {"f64": 0, "f32": 1}


class Opts(ctypes.Structure):
    # farfield_ewald_opts (versioned by struct_size, docs/design.md §3.2)
    _fields_ = [("struct_size", ctypes.c_size_t), ("nthreads", ctypes.c_int32), ("debug", ctypes.c_int32),
                ("fftw", ctypes.c_int32), ("order_or_support", ctypes.c_int32), ("xi", ctypes.c_double),
                ("rc", ctypes.c_double), ("grid", ctypes.c_int64 * 3), ("backend", ctypes.c_int32),
                ("gpu_precision", ctypes.c_int32), ("gpu_method", ctypes.c_int32), ("terms", ctypes.c_int32),
                ("gpu_stream", ctypes.c_void_p)]


class Params(ctypes.Structure):
    # farfield_ewald_params
    _fields_ = [("struct_size", ctypes.c_size_t), ("xi", ctypes.c_double), ("rc", ctypes.c_double),
                ("grid", ctypes.c_int64 * 3), ("order_or_support", ctypes.c_int32), ("method", ctypes.c_int32),
                ("eta", ctypes.c_double), ("kc", ctypes.c_double), ("est_rel_err", ctypes.c_double),
                ("real_s", ctypes.c_double), ("kspace_s", ctypes.c_double)]


class EwaldCapi:
    def __init__(self, lib):
        self.lib = ctypes.CDLL(str(Path(lib)))
        self.lib.farfield_last_error_message.restype = ctypes.c_char_p

    def _check(self, st, what):
        if st != 0:
            raise RuntimeError(f"farfield {what}: status {st}: {self.lib.farfield_last_error_message().decode()}")

    def run(self, x, q, box, method="spme", tol=1e-5, backend="cuda", prec="f64", repeats=20, threads=0, debug_lines=False):
        """x (n, 3), q (n,), box (3, 3) NumPy float64 arrays. Returns a dict: times_s (every timed
        evaluation), plan_s, energy, phi, field (n, 3), params, debug_lines (module docs)."""
        import numpy as np

        x = np.ascontiguousarray(x, dtype=np.float64)
        q = np.ascontiguousarray(q, dtype=np.float64).reshape(-1)
        box = np.ascontiguousarray(box, dtype=np.float64).reshape(9)
        n = len(q)
        o = Opts()
        self._check(self.lib.farfield_ewald_default_opts(ctypes.byref(o), ctypes.c_size_t(ctypes.sizeof(o))), "default_opts")
        o.nthreads = threads
        o.backend = BACKENDS[backend]
        if backend == "cuda":
            o.gpu_precision = GPU_PRECISION[prec]
        ptr = lambda a: ctypes.c_void_p(a.ctypes.data)

        def makeplan():
            plan = ctypes.c_void_p()
            self._check(self.lib.farfield_ewald_makeplan(METHODS[method], ptr(box), ctypes.c_int64(n), ctypes.c_double(tol),
                                                         ctypes.byref(plan), ctypes.byref(o)), "ewald_makeplan")
            return plan

        def execute(plan, phi, field, energy):
            self._check(self.lib.farfield_ewald_execute(plan, ctypes.c_int64(n), ptr(x), ptr(q), ptr(phi), ptr(field),
                                                        ctypes.byref(energy), None), "ewald_execute")

        t = time.perf_counter()
        plan = makeplan()
        plan_s = time.perf_counter() - t
        try:
            phi = np.zeros(n)
            field = np.zeros((n, 3))
            energy = ctypes.c_double()
            execute(plan, phi, field, energy)  # warm-up
            times = []
            for _ in range(repeats):
                t = time.perf_counter()
                execute(plan, phi, field, energy)
                times.append(time.perf_counter() - t)
            p = Params()
            p.struct_size = ctypes.sizeof(p)
            self._check(self.lib.farfield_ewald_get_params(plan, ctypes.byref(p)), "ewald_get_params")
            params = {"xi": p.xi, "rc": p.rc, "grid": list(p.grid), "order_or_support": p.order_or_support,
                      "est_rel_err": p.est_rel_err, "real_s": p.real_s, "kspace_s": p.kspace_s}
        finally:
            self.lib.farfield_ewald_destroy(plan)
        lines = []
        if debug_lines:
            o.debug = 1
            outputs = (np.zeros(n), np.zeros((n, 3)), ctypes.c_double())  # the timed run's results stay

            def debug_run():
                dplan = makeplan()
                try:
                    for _ in range(2):  # the first evaluation allocates the device buffers
                        execute(dplan, *outputs)
                finally:
                    self.lib.farfield_ewald_destroy(dplan)
            all_lines = [l for l in stderr_of(debug_run).splitlines() if l.startswith("[farfield")]
            # the second evaluation's lines: those after the first host-arrays line, if any
            marks = [i for i, l in enumerate(all_lines) if "host arrays" in l]
            lines = all_lines[marks[0] + 1:] if len(marks) >= 2 else all_lines
        return {"times_s": times, "plan_s": plan_s, "energy": energy.value, "phi": phi, "field": field, "params": params,
                "debug_lines": lines}
