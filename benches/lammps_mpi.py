#!/usr/bin/env python3
"""LAMMPS on farfield's distributed SPME on 1-4 MPI ranks: accuracy and time per step.

Runs the driver examples/lammps/lammps_farfield.cpp as CTest does, for the peptide and the
SPC/E water box: on one rank against LAMMPS's `kspace_style ewald 1e-8` and `pppm 1e-5` (and
recording the run), then on 2, 3 and 4 ranks against the recorded run. Keeps every run's
output (the driver's report) with the numbers read from it and the machine in a JSON file.

    python3 benches/lammps_mpi.py --driver <build>/lammps_farfield \\
        --json-out benches/results/lammps_mpi_<date>.json

The driver is built by CTest (examples_build) or by hand: cmake -S examples -B build-examples
-DCMAKE_PREFIX_PATH=<farfield prefix, built with MPI>; cmake --build build-examples.
"""
import argparse
import datetime
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benches", "gpu"))
import kit_machine  # noqa: E402  (the one description of the host: CPU model, cores, memory)
NUM = r"([-+0-9.eE]+)"


def parse(out):
    """The figures of one report of the driver."""
    r = {}
    m = re.search(r"plan tol " + NUM + r"; xi " + NUM + r" 1/A, r_c " + NUM + r" A, grid (\d+) x (\d+) x (\d+), order (\d+)", out)
    if m:
        r.update(plan_tol=float(m[1]), xi=float(m[2]), rc=float(m[3]), grid=[int(m[4]), int(m[5]), int(m[6])], order=int(m[7]))
    m = re.search(r"RMS Coulomb force " + NUM + r" kcal/mol/A with the\s+special pairs.*?\(F_ff\), " + NUM, out, re.S)
    if m:
        r.update(f_ff=float(m[1]), f_all=float(m[2]))
    for name, key in (("farfield SPME", "farfield"), ("LAMMPS pppm 1e-5", "pppm")):
        m = re.search(re.escape(name) + r"\s+" + r"\s+".join([NUM] * 7), out)
        if m:
            v = [float(x) for x in m.groups()]
            r[key] = dict(rms_df=v[0], df_over_f_ff=v[1], df_over_f_all=v[2], max_dpe=v[3], max_dpress=v[4], max_dx=v[5], ms_per_step=v[6])
    m = re.search(r"potential energy over the \d+ steps " + NUM + r", of the forces \(RMS\) at steps 0, 10, \.\.\. " + NUM
                  + r", of the pressure " + NUM, out)
    if m:
        r.update(rel_dpe_vs_record=float(m[1]), rel_df_vs_record=float(m[2]), rel_dpress_vs_record=float(m[3]))
    m = re.search(r"RMS dF at step 0 " + NUM + r" kcal/mol/A = " + NUM + r" F_ff = " + NUM + r" F_all; max \|dPE\| " + NUM, out)
    if m:
        r.update(rms_df=float(m[1]), df_over_f_ff=float(m[2]), df_over_f_all=float(m[3]), max_dpe=float(m[4]))
    m = re.search(r"time per step " + NUM + r" ms \(farfield's callback " + NUM, out)
    if m:
        r.update(ms_per_step=float(m[1]), callback_ms=float(m[2]))
    r["agrees"] = "farfield agrees with the reference" in out
    return r


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--driver", required=True)
    ap.add_argument("--examples", default="/usr/share/lammps/examples")
    ap.add_argument("--steps", type=int, default=100)
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("--ranks", default="2,3,4")
    ap.add_argument("--json-out")
    a = ap.parse_args()
    mpirun = shutil.which("mpirun") or sys.exit("mpirun not found: install Open MPI (scripts/install-deps.sh)")
    cores = os.cpu_count() or 1
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    runs, ok = [], True
    with tempfile.TemporaryDirectory() as tmp:
        for system in ("peptide", "water"):
            rec = os.path.join(tmp, system + ".rec")
            for k in [1] + [int(x) for x in a.ranks.split(",")]:
                cmd = [mpirun, "-np", str(k)] + (["--oversubscribe"] if k > cores else []) + [
                    a.driver, system, a.examples, str(a.steps), repr(a.tol), "1", "--record" if k == 1 else "--compare", rec]
                print("+", " ".join(cmd), flush=True)
                p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False)
                sys.stdout.write(p.stdout)
                if p.returncode:
                    sys.stderr.write(p.stderr)
                    ok = False
                runs.append(dict(system=system, ranks=k, oversubscribed=k > cores, exit=p.returncode, output=p.stdout.replace(tmp, "<tmp>"),
                                 **parse(p.stdout)))
    if a.json_out:
        out = {
            "what": "LAMMPS (Debian's library) with farfield's distributed SPME for all of its Coulomb interaction: 1 rank "
                    "against LAMMPS's ewald 1e-8 and pppm 1e-5, 2-4 ranks against the 1-rank run",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"cpu_model": kit_machine.cpu()["model"], "logical_cpus": cores, "os": platform.platform(),
                        "mpi": subprocess.run([mpirun, "--version"], capture_output=True, text=True).stdout.splitlines()[:1],
                        "farfield_commit": subprocess.run(["git", "-C", ROOT, "rev-parse", "HEAD"], capture_output=True,
                                                          text=True).stdout.strip()},
            "steps": a.steps, "tol": a.tol, "threads_per_rank": 1,
            "runs": runs,
        }
        with open(a.json_out, "w") as f:
            json.dump(out, f, indent=1)
        print(f"wrote {a.json_out}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
