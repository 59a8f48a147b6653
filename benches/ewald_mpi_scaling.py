#!/usr/bin/env python3
"""Strong scaling of the distributed SPME: 1, 2, 4 MPI ranks against the single-process plan.

For each system and rank count K this runs

    mpirun -np K [--oversubscribe] farfield ewald --mpi --input DIR [--replicate A,B,C]
           --threads 1 --repeats R --fftw F --json

in which rank 0 first times the single-process plan alone (the other ranks wait), then all
ranks time the distributed plan: serial and distributed in the same run. It keeps the JSON of
every run (every timed evaluation of both plans, the per-rank real-space and k-space seconds,
slabs and mesh memory) with the machine (CPU model, cores, Open MPI version, whether the
ranks outnumber the cores) and prints a table. The systems: JAC DHFR (23,558 charges,
data/jac_dhfr) and a water box of 1,058,400 charges (data/water_tip3p_900 repeated 7x7x8).

    python3 benches/ewald_mpi_scaling.py --farfield target/release/farfield \\
        --json-out benches/results/ewald_mpi_scaling_<date>.json

Needs a farfield built with MPI (cargo build --release -p farfield-cli --features mpi).
The model of where the slab decomposition stops scaling is in docs/mpi_scaling.md.
"""
import argparse
import datetime
import json
import os
import platform
import shutil
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "benches", "gpu"))
import kit_machine  # noqa: E402  (the one description of the host: CPU model, cores, memory)

SYSTEMS = {
    "jac_dhfr": {"input": "data/jac_dhfr", "replicate": None, "repeats": 10, "fftw": "measure"},
    # FFTW's measure planning of the 10^6-charge mesh (about 10^7 points) over MPI takes minutes
    # at 4 ranks on 2 cores: estimate, for both plans alike
    "water_1M": {"input": "data/water_tip3p_900", "replicate": "7,7,8", "repeats": 5, "fftw": "estimate"},
}


def command_output(cmd):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, check=False).stdout.strip()
    except OSError:
        return ""


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--farfield", default=os.path.join(ROOT, "target/release/farfield"))
    ap.add_argument("--ranks", default="1,2,4")
    ap.add_argument("--systems", default=",".join(SYSTEMS))
    ap.add_argument("--tol", type=float, default=1e-5)
    ap.add_argument("--json-out")
    a = ap.parse_args()
    mpirun = shutil.which("mpirun") or shutil.which("mpiexec")
    if not mpirun:
        sys.exit("mpirun not found: install Open MPI (scripts/install-deps.sh)")
    cores = os.cpu_count() or 1
    env = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1", OMPI_MCA_rmaps_base_oversubscribe="1")
    runs = []
    for name in a.systems.split(","):
        s = SYSTEMS[name]
        for k in map(int, a.ranks.split(",")):
            cmd = [mpirun, "-np", str(k)]
            if k > cores:
                cmd.append("--oversubscribe")
            # (the input relative to the repository, run from there: no machine paths in the results)
            cmd += [os.path.abspath(a.farfield), "ewald", "--mpi", "--input", s["input"], "--threads", "1",
                    "--repeats", str(s["repeats"]), "--fftw", s["fftw"], "--tol", repr(a.tol), "--json"]
            if s["replicate"]:
                cmd += ["--replicate", s["replicate"]]
            print("+", " ".join(os.path.relpath(c, ROOT) if c.startswith(ROOT) else c for c in cmd), flush=True)
            p = subprocess.run(cmd, capture_output=True, text=True, env=env, check=False, cwd=ROOT)
            sys.stdout.write(p.stdout)
            if p.returncode != 0:
                sys.stderr.write(p.stderr)
                sys.exit(f"{name} on {k} ranks failed (exit {p.returncode})")
            r = json.loads(p.stdout.strip().splitlines()[-1])
            r.update(system_key=name, oversubscribed=k > cores, fftw=s["fftw"], replicate=s["replicate"],
                     command=" ".join(["mpirun"] + cmd[1:cmd.index(os.path.abspath(a.farfield))] + ["farfield"]
                                      + cmd[cmd.index(os.path.abspath(a.farfield)) + 1:]))
            runs.append(r)
    print()
    print(f"{'system':10} {'charges':>9} {'K':>2} {'T_K (s)':>9} {'T_1 (s)':>9} {'speed-up':>8} {'eff.':>5} "
          f"{'real max':>9} {'kspace max':>10} {'mesh/rank MB':>12}")
    for r in runs:
        pr = r["per_rank"]
        print(f"{r['system_key']:10} {r['n']:9d} {r['ranks']:2d} {r['time_s']:9.4f} {r['single_process_time_s']:9.4f} "
              f"{r['single_process_time_s'] / r['time_s']:8.2f} {r['efficiency']:5.2f} "
              f"{max(x['real_s'] for x in pr):9.4f} {max(x['kspace_s'] for x in pr):10.4f} "
              f"{max(x['mesh_bytes'] for x in pr) / 1e6:12.1f}" + ("  (oversubscribed)" if r["oversubscribed"] else ""))
    if a.json_out:
        out = {
            "what": "strong scaling of the distributed SPME (farfield ewald --mpi), serial and distributed in the same run",
            "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
            "machine": {"cpu_model": kit_machine.cpu()["model"], "logical_cpus": cores, "os": platform.platform(),
                        "mpi": command_output([mpirun, "--version"]).splitlines()[0:1],
                        "farfield_commit": command_output(["git", "-C", ROOT, "rev-parse", "HEAD"])},
            "notes": "one thread per rank; K > logical_cpus runs oversubscribed (--oversubscribe): those ranks share cores, "
                     "so their times bound what K cores would do from above; time_s = fastest evaluation, the slowest rank's "
                     "time per evaluation for the distributed plan; times_s / single_process_times_s = every evaluation",
            "runs": runs,
        }
        with open(a.json_out, "w") as f:
            json.dump(out, f, indent=1)
        print(f"wrote {a.json_out}")


if __name__ == "__main__":
    main()
