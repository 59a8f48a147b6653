"""Peak resident memory (RSS) of the 3D type-1 NUFFT: farfield, FINUFFT and ducc0, each in its
own process with its own inputs, measured by GNU time (`/usr/bin/time -v`, "Maximum resident
set size", KiB; reported in MiB).

- ours: `farfield bench nufft --type 1 --dim 3 ... --check 0` (inputs generated in-process;
  its baseline is a trivial run of the same binary: code, libraries, thread pool);
- FINUFFT and ducc0: a Python script that fills its inputs in place in the library's own
  layout (FINUFFT: x, y, z arrays of M; ducc0: one (M, 3) array; both: M complex strengths
  and an N^3 complex output, touched) and then runs the plan + setpts + execute (FINUFFT:
  `finufft.Plan`, ducc0: `ducc0.nufft.plan` + `nu2u`); its baseline is the same script
  without the NUFFT.
Every process holds the same amount of input and output: 3*8*M + 16*M + 16*N^3 bytes.
"""

import os
import subprocess
import sys
from pathlib import Path

from peer_env import BIN, log
import nufft_peers_run as run

MEM_SCRIPT = r"""
import sys, numpy as np
lib, m, n, tol, threads, run = (sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), float(sys.argv[4]),
                                int(sys.argv[5]), sys.argv[6] == "1")
if lib == "finufft":
    import finufft
else:
    import ducc0
rng = np.random.default_rng(42)
# fill the arrays in place: no temporaries, so the baseline peak is interpreter + arrays
coords = [np.empty(m) for _ in range(3)] if lib == "finufft" else [np.empty((m, 3))]
for a in coords:
    rng.random(out=a); a *= 2 * np.pi; a -= np.pi
c = np.empty(m, dtype=np.complex128)
cv = c.view(np.float64); rng.random(out=cv); cv *= 2; cv -= 1
out = np.zeros((n, n, n), dtype=np.complex128)
out[...] = 0  # touch the output pages, as the Rust side does
if run:
    if lib == "finufft":
        p = finufft.Plan(1, (n, n, n), eps=tol, isign=1, nthreads=threads)
        p.setpts(*coords)
        p.execute(c, out=out)
    else:
        p = ducc0.nufft.plan(nu2u=True, coord=coords[0], grid_shape=(n, n, n), epsilon=tol, nthreads=threads,
                             periodicity=2 * np.pi, fft_order=False)
        p.nu2u(points=c, forward=False, out=out)
print(abs(out[0, 0, :4]).sum())
"""


def ensure_gnu_time():
    """Path of GNU time; installs the Debian package 'time' when it is missing."""
    if Path("/usr/bin/time").exists():
        return "/usr/bin/time"
    log("/usr/bin/time is missing: installing the Debian package 'time'")
    sudo = [] if os.geteuid() == 0 else ["sudo"]
    subprocess.check_call(sudo + ["apt-get", "install", "-y", "-q", "time"])
    return "/usr/bin/time"


def peak_rss_kb(cmd, time_bin):
    p = subprocess.run([time_bin, "-v", *cmd], capture_output=True, text=True)
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{p.stderr[-2000:]}")
    for line in p.stderr.splitlines():
        if "Maximum resident set size" in line:
            return int(line.split(":")[-1])
    raise RuntimeError("no 'Maximum resident set size' in /usr/bin/time output")


def memory(quick, threads, tol=1e-6):
    """Measures and prints the peak-RSS table; returns a dict with every number (MiB)."""
    time_bin = ensure_gnu_time()
    m = 10**6 if quick else 10**7
    n = 64 if quick else 128
    log(f"peak RSS: 3D type 1, M={m:.0e}, N={n}^3, tol {tol:g}, {threads} threads ...")
    ours = peak_rss_kb([str(BIN), "bench", "nufft", "--type", "1", "--dim", "3", "--modes", str(n), "--points", str(m),
                        "--tol", repr(tol), "--threads", str(threads), "--check", "0", *run.OURS_EXTRA_ARGS], time_bin) / 1024
    # the binary's own footprint (code, libraries, thread pool) on a trivial case
    ours_base = peak_rss_kb([str(BIN), "bench", "nufft", "--type", "1", "--dim", "3", "--modes", "2", "--points", "1",
                             "--threads", str(threads), "--check", "0"], time_bin) / 1024
    arrays = (3 * 8 * m + 16 * m + 16 * n**3) / 2**20
    res = {"case": "3D type 1", "points": m, "modes": [n] * 3, "tol": tol, "threads": threads, "arrays_mib": arrays,
           "ours": {"peak_mib": ours, "baseline_mib": ours_base, "working_mib": ours - ours_base - arrays}}
    for lib in ("finufft", "ducc0"):
        py = [sys.executable, "-c", MEM_SCRIPT, lib, str(m), str(n), repr(tol), str(threads)]
        peak = peak_rss_kb(py + ["1"], time_bin) / 1024
        base = peak_rss_kb(py + ["0"], time_bin) / 1024
        res[lib] = {"peak_mib": peak, "baseline_mib": base, "working_mib": peak - base}
    o, f, u = res["ours"], res["finufft"], res["ducc0"]
    res["peak_ratio_vs_ducc0"] = o["peak_mib"] / u["peak_mib"]
    res["peak_ratio_vs_finufft"] = o["peak_mib"] / f["peak_mib"]
    res["working_ratio_vs_ducc0"] = o["working_mib"] / max(u["working_mib"], 1e-9)
    res["working_ratio_vs_finufft"] = o["working_mib"] / max(f["working_mib"], 1e-9)

    print(f"\nPeak RSS, 3D type 1, M={m:.0e}, N={n}^3, tol {tol:g}, {threads} threads, each library in its own "
          f"process with its own inputs and output ({arrays:.0f} MiB of arrays each)\n")
    print("| library | peak RSS (MiB) | baseline (MiB) | NUFFT working memory (MiB) |")
    print("|---|---|---|---|")
    print(f"| ours (farfield bench nufft) | {o['peak_mib']:.0f} | {o['baseline_mib']:.0f} (trivial run) | "
          f"{o['working_mib']:.0f} (peak - arrays - baseline) |")
    for lib, name in (("finufft", "FINUFFT (Python)"), ("ducc0", "ducc0 (Python, plan)")):
        r = res[lib]
        print(f"| {name} | {r['peak_mib']:.0f} | {r['baseline_mib']:.0f} (the script without the NUFFT) | "
              f"{r['working_mib']:.0f} (peak - baseline) |")
    print(f"\npeak RSS ours/ducc0 = {res['peak_ratio_vs_ducc0']:.2f}, ours/FINUFFT = "
          f"{res['peak_ratio_vs_finufft']:.2f}; NUFFT working memory ours/ducc0 = {res['working_ratio_vs_ducc0']:.2f}, "
          f"ours/FINUFFT = {res['working_ratio_vs_finufft']:.2f}")
    return res
