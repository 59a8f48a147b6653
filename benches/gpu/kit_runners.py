"""The GPU kit's runners: one per path, each turning the existing benchmark scripts' output
into kit records (`benches/gpu/kit.py`; record fields in `kit_report.py`).

| path | runs | ours | peer |
| --- | --- | --- | --- |
| nufft | `benches/peers/nufft_vs_cufinufft.py --case-list ... --json` (one process, cases streamed) | farfield CUDA (C API, device arrays) | cuFINUFFT 2.5.1 |
| spread | `farfield bench spread --backend cuda --method M --json`, one process per case | the CUDA kernels alone (device arrays) | the CPU spreader of the same run |
| ewald | `benches/peers/ewald_vs_openmm.py --gpu --ours-host --json` per precision | farfield SPME, host arrays and device arrays | OpenMM PME on each platform |
| fmm | `benches/fmm_cuda.py --json` per case | CUDA FMM (plain M2L, the default; symmetric M2L) | the CPU FMM, same p and D, all cores |

The parsers (`nufft_records`, `spread_records`, `ewald_records`, `fmm_records`) read the
scripts' JSON as it is written; the self-test runs `spread_records` on a real CPU run of the CLI.
Standard library only.
"""

import json
import os
import statistics
import time
from pathlib import Path

import kit_cases
import kit_proc

ROOT = Path(__file__).resolve().parents[2]
NUFFT_SCRIPT = ROOT / "benches" / "peers" / "nufft_vs_cufinufft.py"
EWALD_SCRIPT = ROOT / "benches" / "peers" / "ewald_vs_openmm.py"
FMM_SCRIPT = ROOT / "benches" / "fmm_cuda.py"


def record(path, case, side, impl, status, repetitions=(), metric="time_s", stages=None, rel_error=None,
           reason=None, median_s=None, extra=None):
    """One kit record: a side of a case (fields: kit_report.py docstring). Times in seconds."""
    reps = [float(v) for v in repetitions]
    if median_s is None and reps:
        median_s = statistics.median(reps)
    return {"path": path, "case": case["id"], "params": case.get("params", {}), "side": side, "impl": impl,
            "status": status, "metric": metric, "repetitions": reps, "median_s": median_s,
            "stages": {k: [float(x) for x in v] for k, v in (stages or {}).items()}, "rel_error": rel_error,
            "reason": reason, "extra": extra or {}}


def failed(path, case, status, reason, sides=(("ours", "farfield"), ("peer", "peer"))):
    return [record(path, case, side, impl, status, reason=reason) for side, impl in sides]


GRACE_S = 20  # how far past its path's budget a case started in time may run


def case_timeout(case, deadline):
    """The case's own timeout, cut so that it ends at most GRACE_S after the path's budget."""
    return max(10.0, min(case["timeout_s"], deadline - time.monotonic() + GRACE_S))


def run_to_json_file(ctx, case, deadline, cmd_of, prefix=""):
    """Runs `cmd_of(ctx, params, json_path)` for `case` within its timeout; returns the process
    result, the JSON document the script wrote (None if none) and the timeout used."""
    jpath = ctx.work / f"{case['path']}-{case['id']}.json"
    ctx.work.mkdir(parents=True, exist_ok=True)
    if jpath.exists():
        jpath.unlink()
    limit = case_timeout(case, deadline)
    r = kit_proc.run_cmd(cmd_of(ctx, case["params"], str(jpath)), limit, ctx.env, str(ctx.root), echo_prefix=prefix or None)
    return r, (json.loads(jpath.read_text()) if jpath.exists() else None), limit


def last_json(stdout):
    """The JSON object on the last non-empty line of a CLI's stdout."""
    lines = [l for l in stdout.strip().splitlines() if l.strip()]
    if not lines:
        raise ValueError("no output")
    return json.loads(lines[-1])


class Ctx:
    """Where things are: the CLI, the library, the cuFINUFFT build, data, a scratch folder."""

    def __init__(self, root=ROOT, bin=None, lib=None, python=None, cufinufft_lib=None, cufinufft_py=None,
                 data=None, ewald_ref=None, work=None, threads=None, openmm_problem=None, env=None):
        self.root = Path(root)
        self.bin = str(bin or self.root / "build-gpu" / "farfield")
        self.lib = str(lib or self.root / "build-gpu" / "libfarfield.so")
        self.python = python or "python3"
        self.cufinufft_lib, self.cufinufft_py = cufinufft_lib, cufinufft_py
        self.data = Path(data or os.environ.get("FARFIELD_DATA_DIR") or self.root / "data")
        self.ewald_ref = ewald_ref
        self.work = Path(work or "/tmp/ff-gpu-kit")
        self.threads = threads or os.cpu_count() or 1
        self.openmm_problem = openmm_problem  # None: OpenMM imports; else why not
        self.env = dict(env or os.environ)
        self.env.setdefault("PYTHONUNBUFFERED", "1")
        self.env["FARFIELD_BIN"] = self.bin


# --------------------------------------------------------------------------------------------- NUFFT
def nufft_records(case, r):
    """Records of one NUFFT case from the script's case dict (or the kit's timeout/error dict)."""
    sides = (("ours", "farfield CUDA"), ("peer", "cuFINUFFT 2.5.1"))
    if r is None:
        return failed("nufft", case, "error", "not run", sides)
    if "ours" not in r:
        last = [l for l in (r.get("stderr_tail") or "").splitlines() if l.strip()][-1:]
        why = r.get("reason") or "?"
        return failed("nufft", case, r.get("status", "error"), f"{why}: {last[0].strip()}" if last else why, sides)
    out = []
    for side, impl in sides:
        d = r[side]
        st = d.get("status", "error")
        stages = {k: d.get(k, []) for k in ("plan", "setpts", "execute")}
        extra = {k: d[k] for k in ("info", "setpts_from", "phases_ms", "debug_lines") if k in d}
        extra["wall_s"] = r.get("wall_s")
        out.append(record("nufft", case, side, impl, st if st in ("ok", "error", "skipped") else "error",
                          d.get("execute", []) if st == "ok" else [], "execute_s", stages if st == "ok" else None,
                          d.get("rel_error"), d.get("message") or d.get("reason"), extra=extra))
    return out


def run_nufft(ctx, cases, deadline, log):
    if not cases:
        return [], {}
    p = kit_cases.PATHS["nufft"]
    peer = ["--cufinufft-lib", str(ctx.cufinufft_lib), "--cufinufft-py", str(ctx.cufinufft_py)] if ctx.cufinufft_lib \
        else ["--no-peer"]
    reps = 5

    def make_cmd(remaining, jpath):
        return [ctx.python, str(NUFFT_SCRIPT), *peer, "--lib", ctx.lib, "--repeat", str(reps), "--json", jpath,
                "--case-list", ";".join(kit_cases.nufft_spec(c) for c in remaining)]

    ctx.work.mkdir(parents=True, exist_ok=True)
    results, events = kit_proc.run_stream(make_cmd, cases, str(ctx.work / "nufft.json"), p["timeout_s"], p["startup_s"],
                                          deadline, ctx.env, str(ctx.root), "[nufft] ")
    for e in events:
        log(f"nufft: process {e['attempt']}: {e['wall_s']:.1f} s, exit status {e['rc']}" + (f", stopped: {e['stop']}" if e["stop"] else ""))
    recs = [r for c in cases for r in nufft_records(c, results.get(c["id"]))]
    raw = {"repeat": reps, "cases": [results.get(c["id"]) for c in cases],
           "processes": [{k: v for k, v in e.items() if k != "stdout"} for e in events]}
    return recs, raw


# --------------------------------------------------------------------------------------------- spreading
def spread_key(params):
    """Cases with the same key run in one process, one CPU run for all their methods."""
    p = params
    return (p["dim"], p["grid"], p["m"], p["tol"], p.get("prec", "f64"), p.get("reps", 3))


def spread_cmd(ctx, params, backend="cuda", methods=None):
    p = params
    cmd = [ctx.bin, "bench", "spread", "--dim", str(p["dim"]), "--grid", str(p["grid"]), "--m", str(p["m"]),
           "--tol", f"{p['tol']:g}", "--precision", p.get("prec", "f64"), "--backend", backend,
           "--reps", str(p.get("reps", 3)), "--json"]
    if backend == "cuda":
        cmd += ["--method", ",".join(methods or [p["method"]])]
    return cmd


def spread_records(case, obj, run=None):
    """Records of one `farfield bench spread --json` object (CPU: the peer only; CUDA: both,
    the GPU side from `run`, one entry of the object's `cuda_runs`, by default its first).
    A key the CLI no longer writes raises KeyError."""
    p = case["params"]
    cpu = obj["cpu"]
    base = {"dim": obj["dim"], "grid": obj["grid"], "m": obj["m"], "w": obj["w"], "asm": obj["asm"],
            "kernel": obj["kernel"], "periodic": obj["periodic"], "precision": obj["precision"]}
    notes = []
    if "w" in p and obj["w"] != p["w"]:
        notes.append(f"kernel width {obj['w']}, not the case's {p['w']}")
    peer = record("spread", case, "peer", f"farfield CPU spreader ({cpu['threads']} threads)", "ok", cpu["spread_reps_s"],
                  "spread_s", {"setpts": [cpu["setpts_s"]], "spread": cpu["spread_reps_s"], "interp": cpu["interp_reps_s"]},
                  reason="; ".join(notes) or None, extra=dict(base))
    out = [peer]
    if obj["backend"] == "cuda":
        run = run if run is not None else obj["cuda_runs"][0]
        if "error" in run:  # this method alone failed (e.g. CSR beyond 2^32 - 1 entries)
            out.append(record("spread", case, "ours", f"farfield CUDA {run['method_requested']}", "error", [], "spread_s",
                              reason=run["error"], extra=dict(base)))
            return out
        g, plan = run["cuda"], run["cuda_plan"]
        extra = dict(base, device=g["device"], method=g["method"], compute_units=g.get("cu"),
                     host_arrays={"method": plan["method"], "setpts_s": plan["setpts_s"], "spread_s": plan["spread_s"],
                                  "interp_s": plan["interp_s"], "spread_rel_diff": plan["spread_rel_diff"],
                                  "interp_rel_diff": plan["interp_rel_diff"]})
        if p.get("method") == "auto":
            extra["auto_picked"] = g["method"]
        out.append(record("spread", case, "ours", f"farfield CUDA {g['method']} (kernels, device arrays)", "ok",
                          g["spread_reps_s"], "spread_s",
                          {"setpts": [g["setpts_s"]], "spread": g["spread_reps_s"], "interp": g["interp_reps_s"]},
                          rel_error=max(plan["spread_rel_diff"], plan["interp_rel_diff"]),
                          reason="; ".join(notes) or None, extra=extra))
    return out


def spread_groups(cases):
    """Consecutive cases of one `spread_key`, in order (the case list's priority is kept)."""
    groups = []
    for c in cases:
        if groups and spread_key(groups[-1][0]["params"]) == spread_key(c["params"]):
            groups[-1].append(c)
        else:
            groups.append([c])
    return groups


def run_spread(ctx, cases, deadline, log):
    """Runs consecutive cases of one size, width and precision as one process (`--method` list)."""
    recs, raw = [], []
    sides = (("ours", "farfield CUDA"), ("peer", "farfield CPU spreader"))
    for group in spread_groups(cases):
        if time.monotonic() >= deadline:
            for c in group:
                recs += failed("spread", c, "skipped", "path budget spent", sides)
            continue
        limit = min(len(group) * case_timeout(group[0], deadline), max(deadline - time.monotonic(), 1) + GRACE_S)
        methods = [c["params"]["method"] for c in group]
        r = kit_proc.run_cmd(spread_cmd(ctx, group[0]["params"], methods=methods), limit, ctx.env, str(ctx.root))
        ids = ",".join(c["id"] for c in group)
        raw.append({"ids": ids, "status": r["status"], "rc": r["rc"], "wall_s": r["wall_s"], "stdout": r["stdout"][-4000:],
                    "stderr": r["stderr"][-2000:]})
        if r["status"] != "ok":
            why = f"no result within {limit:.0f} s" if r["status"] == "timeout" else (r["stderr"].strip().splitlines() or ["?"])[-1]
            for c in group:
                recs += failed("spread", c, r["status"], why, sides)
            log(f"spread {ids}: {r['status']}: {why}")
            continue
        try:
            obj = last_json(r["stdout"])
            got = [spread_records(c, obj, obj["cuda_runs"][k]) for k, c in enumerate(group)]
        except (ValueError, KeyError, IndexError) as e:
            for c in group:
                recs += failed("spread", c, "error", f"cannot read the CLI's JSON: {e!r}", sides)
            continue
        for k, (c, rs) in enumerate(zip(group, got)):
            for g in rs:
                g["extra"]["wall_s"] = r["wall_s"]
                g["extra"]["process"] = f"one process for {len(group)} method(s), the CPU run shared"
            recs += rs
            ours = next((g for g in rs if g["side"] == "ours"), None)
            log(f"spread {c['id']}: spread {ours['median_s'] * 1e3:.3f} ms ({ours['extra'].get('method')})"
                if ours and ours["status"] == "ok" else f"spread {c['id']}: no CUDA result ({ours and ours['reason']})")
        log(f"spread: {len(group)} case(s) in {r['wall_s']:.1f} s")
    return recs, raw


# --------------------------------------------------------------------------------------------- Ewald
def ewald_cmd(ctx, params, json_path):
    p = params
    cmd = [ctx.python, str(EWALD_SCRIPT), "--systems", "jac", "--gpu", "--threads", str(ctx.threads),
           "--target", f"{p['target']:g}", "--repeats", str(p["repeats"]), "--ours-prec", p["ours_prec"],
           "--openmm-precision", p["openmm_precision"], "--openmm-platform", ",".join(p["platforms"]),
           "--ours-methods", "spme", "--ours-tols", ",".join(f"{t:g}" for t in p["ours_tols"]),
           "--openmm-cutoffs", ",".join(f"{t:g}" for t in p["openmm_cutoffs"]),
           "--openmm-tols", ",".join(f"{t:g}" for t in p["openmm_tols"]),
           "--ours-host", "--lib", ctx.lib, "--skip-crosscheck", "--json", json_path]
    if ctx.ewald_ref:
        cmd += ["--reference", str(ctx.ewald_ref)]
    if ctx.openmm_problem:
        cmd.append("--no-openmm")
    return cmd


def ewald_records(case, doc, openmm_problem=None):
    """Per code (ours CLI / ours host / OpenMM per platform): the fastest setting meeting the
    target, with every timed evaluation that code reports."""
    p = case["params"]
    rows = next(iter(v for k, v in doc.items() if "JAC" in k or "jac" in k), None)
    if rows is None:
        raise KeyError("no JAC DHFR rows")
    out = []
    ref = next((r for r in rows if r.get("code") == "reference"), None)
    codes = list(dict.fromkeys(r["code"] for r in rows if r["code"] != "reference"))
    for code in codes:
        mine = [r for r in rows if r["code"] == code]
        side = "ours" if code.startswith("farfield") else "peer"
        impl = code + (" (CLI, device arrays)" if side == "ours" and not code.endswith("host") else "")
        impl = impl.replace(" host", " (C API, host arrays)")
        down = [r for r in mine if r.get("status", "ok") != "ok"]
        mine = [r for r in mine if r.get("status", "ok") == "ok"]
        if not mine:  # a platform that does not load is skipped; settings that all failed are an error
            st = "skipped" if any(r.get("status") == "unavailable" for r in down) else "error"
            out.append(record("ewald", case, side, impl, st, reason=down[0].get("reason"),
                              extra={"version": down[0].get("version"), "failed_settings": down}))
            continue
        ok = [r for r in mine if r["force_err"] <= p["target"]]
        if not ok:
            best = min(mine, key=lambda r: r["force_err"])
            out.append(record("ewald", case, side, impl, "error",
                              reason=f"no setting met force error {p['target']:g} (best {best['force_err']:.2e})",
                              extra={"settings": mine}))
            continue
        b = min(ok, key=lambda r: r["time_s"])
        reps = b.get("times_s") or [b["time_s"]]
        extra = {k: b[k] for k in ("setting", "params", "energy_err", "plan_s", "real_s", "kspace_s", "version", "debug_lines")
                 if k in b}
        extra["settings_tried"] = len(mine) + len(down)
        if down:
            extra["failed_settings"] = down
        if "times_s" not in b:
            extra["reported"] = f"fastest and median of {b.get('repeats', '?')} (the CLI reports no other)"
        out.append(record("ewald", case, side, impl, "ok", reps, "time_s", rel_error=b["force_err"],
                          median_s=b.get("median_s"), extra=extra))
    if openmm_problem:
        out.append(record("ewald", case, "peer", "OpenMM", "skipped", reason=f"OpenMM does not import: {openmm_problem}"))
    if ref is not None:
        for r in out:
            r["extra"]["reference_s"] = ref.get("time_s")
            r["extra"]["reference_cached"] = ref.get("cached")
    return out


def run_ewald(ctx, cases, deadline, log):
    recs, raw = [], []
    for c in cases:
        if time.monotonic() >= deadline:
            recs += failed("ewald", c, "skipped", "path budget spent")
            continue
        r, doc, limit = run_to_json_file(ctx, c, deadline, ewald_cmd, "[ewald] ")
        raw.append({"id": c["id"], "status": r["status"], "rc": r["rc"], "wall_s": r["wall_s"], "rows": doc,
                    "table": r["stdout"][-6000:]})
        if r["status"] != "ok" or doc is None:
            why = f"no result within {limit:.0f} s" if r["status"] == "timeout" else (r["stderr"].strip().splitlines() or ["?"])[-1]
            recs += failed("ewald", c, r["status"] if r["status"] != "ok" else "error", why)
            continue
        try:
            recs += ewald_records(c, doc, ctx.openmm_problem)
        except (KeyError, ValueError) as e:
            recs += failed("ewald", c, "error", f"cannot read the script's JSON: {e!r}")
        log(f"ewald {c['id']}: {r['wall_s']:.1f} s")
    return recs, raw


# --------------------------------------------------------------------------------------------- FMM
def fmm_cmd(ctx, params, json_path):
    p = params
    src = ["--input", str(ctx.data / p["input"])] if p["input"] else ["--n", p["n"], "--dist", p["dist"]]
    cmd = [ctx.python, str(FMM_SCRIPT), *src, "--tol", f"{p['tol']:g}", "--boundary", p["boundary"], "--reps", str(p["reps"]),
           "--json", json_path]
    if not p["symmetric"]:
        cmd.append("--no-symmetric")
    return cmd


def fmm_records(case, doc, threads=None):
    c = doc["cases"][0]
    main, sym = c["plain"], c.get("symmetric")  # the default kernel (with the CPU comparison), the other
    if "error" in main:
        return failed("fmm", case, "error", " ".join(main["error"]))
    err = main.get("rel_error_field")  # of the fields (forces); the potentials' is in extra
    base = {"p": main["p"], "depth": main["depth"], "n": main["n"], "plan_s": main["plan_s"],
            "rel_error_potential": main.get("rel_error_potential"), "rel_error_field": main.get("rel_error_field"),
            "reference": main.get("reference"), "reported": f"fastest of {main['reps']} (the CLI reports no other)"}
    stages = {k: [v] for k, v in main["stages"].items()}
    out = [record("fmm", case, "ours", "farfield CUDA FMM (plain M2L)", "ok", [main["execute_s"]], "execute_s", stages,
                  err, extra=dict(base, m2l_counts=main.get("m2l_counts"), vs_cpu=main.get("vs_cpu"),
                                  tree_steps=main.get("tree_steps")))]
    if sym and "error" not in sym:
        out.append(record("fmm", case, "ours", "farfield CUDA FMM (symmetric M2L)", "ok", [sym["execute_s"]], "execute_s",
                          {k: [v] for k, v in sym["stages"].items()}, err, extra=dict(base)))
    v = main.get("vs_cpu")
    if v:
        out.append(record("fmm", case, "peer", f"farfield CPU FMM ({threads or '?'} threads, same p and D)", "ok",
                          [v["cpu_execute_s"]], "execute_s", rel_error=None,
                          extra={"max_rel_diff_potential": v["max_rel_diff_potential"],
                                 "max_rel_diff_field": v["max_rel_diff_field"]}))
    else:
        out.append(record("fmm", case, "peer", "farfield CPU FMM", "error", reason="no CPU comparison in the CLI's output"))
    return out


def run_fmm(ctx, cases, deadline, log):
    recs, raw = [], []
    for c in cases:
        if time.monotonic() >= deadline:
            recs += failed("fmm", c, "skipped", "path budget spent")
            continue
        r, doc, limit = run_to_json_file(ctx, c, deadline, fmm_cmd)
        raw.append({"id": c["id"], "status": r["status"], "wall_s": r["wall_s"], "doc": doc, "table": r["stdout"][-4000:]})
        if r["status"] != "ok" or not doc or not doc.get("cases"):
            why = f"no result within {limit:.0f} s" if r["status"] == "timeout" else (r["stderr"].strip().splitlines() or ["?"])[-1]
            recs += failed("fmm", c, r["status"] if r["status"] != "ok" else "error", why)
            continue
        recs += fmm_records(c, doc, ctx.threads)
        log(f"fmm {c['id']}: {r['wall_s']:.1f} s")
    return recs, raw


RUNNERS = {"nufft": run_nufft, "spread": run_spread, "ewald": run_ewald, "fmm": run_fmm}
