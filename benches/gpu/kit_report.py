"""The GPU kit's results: the JSON document (schema, checked before it is written) and the
Markdown tables of ratios ours ÷ peer (`benches/gpu/kit.py`). Standard library only.

A record is one side of one case:

    {"path": "nufft", "case": "3d-t1-f64-1e-06", "params": {...}, "side": "ours" | "peer",
     "impl": "farfield CUDA", "status": "ok" | "timeout" | "error" | "skipped",
     "metric": "execute_s", "repetitions": [seconds, ...], "median_s": seconds | null,
     "stages": {"plan": [...], ...}, "rel_error": float | null, "reason": str | null, "extra": {...}}

A ratio pairs each "ours" record with each "peer" record of the same case, both ok:
ours median ÷ peer median (below 1: ours faster).
"""

import json
import math
import os
import statistics
from pathlib import Path

STATUSES = ("ok", "timeout", "error", "skipped")
SIDES = ("ours", "peer")
REQUIRED = {"path": str, "case": str, "side": str, "impl": str, "status": str, "metric": str, "repetitions": list}
TOP = ("schema", "created_utc", "command_line", "mode", "machine", "paths", "records")


def check_record(r):
    """Problems of one record (empty list when it is well formed)."""
    bad = [f"missing or mistyped {k}" for k, t in REQUIRED.items() if not isinstance(r.get(k), t)]
    if bad:
        return bad
    if r["side"] not in SIDES:
        bad.append(f"side {r['side']!r}")
    if r["status"] not in STATUSES:
        bad.append(f"status {r['status']!r}")
    if not all(isinstance(v, (int, float)) and math.isfinite(v) and v >= 0 for v in r["repetitions"]):
        bad.append("repetitions must be finite seconds")
    if r["status"] == "ok":
        if not r["repetitions"]:
            bad.append("an ok record without repetitions")
        m = r.get("median_s")
        if not (isinstance(m, (int, float)) and math.isfinite(m) and m > 0):
            bad.append("an ok record without a positive median_s")
    elif not r.get("reason"):
        bad.append(f"a {r['status']} record without a reason")
    return bad


def validate(doc):
    """Raises ValueError listing every problem of the results document."""
    problems = [f"missing top-level key {k}" for k in TOP if k not in doc]
    for i, r in enumerate(doc.get("records", [])):
        problems += [f"record {i} ({r.get('path')}/{r.get('case')}/{r.get('side')}): {p}" for p in check_record(r)]
    if problems:
        raise ValueError("results do not match the schema:\n  " + "\n  ".join(problems[:50]))


def relative_paths(obj, root):
    """`obj` with the repository's absolute path removed from every string (results are
    committed: paths are relative to the repository root)."""
    root = str(root).rstrip("/")
    if isinstance(obj, str):
        return obj.replace(root + "/", "").replace(root, ".")
    if isinstance(obj, dict):
        return {k: relative_paths(v, root) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [relative_paths(v, root) for v in obj]
    return obj


def write_json(folder, doc):
    validate(doc)
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / "results.json.tmp"
    tmp.write_text(json.dumps(doc, indent=1, default=str))
    os.replace(tmp, folder / "results.json")
    return folder / "results.json"


# --------------------------------------------------------------------------------------------- tables
def ratios(records):
    """Every (ours, peer) pair of a case with both ok: dicts with the ratio of the medians."""
    by_case = {}
    for r in records:
        by_case.setdefault((r["path"], r["case"]), []).append(r)
    out = []
    for (path, case), rs in by_case.items():
        for o in (r for r in rs if r["side"] == "ours" and r["status"] == "ok"):
            for p in (r for r in rs if r["side"] == "peer" and r["status"] == "ok"):
                out.append({"path": path, "case": case, "ours": o["impl"], "peer": p["impl"], "ours_s": o["median_s"],
                            "peer_s": p["median_s"], "ratio": o["median_s"] / p["median_s"]})
    return out


def ms(v):
    return "–" if v is None or (isinstance(v, float) and not math.isfinite(v)) else f"{v * 1e3:.3f}"


def err(v):
    return "–" if v is None else f"{v:.1e}"


def med(vals):
    return statistics.median(vals) if vals else None


def table(header, rows):
    lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines)


def ratio_table(records):
    rows = [(r["path"], r["case"], r["ours"], ms(r["ours_s"]), r["peer"], ms(r["peer_s"]), f"{r['ratio']:.2f}")
            for r in ratios(records)]
    return table(["path", "case", "ours", "ours ms (median)", "peer", "peer ms (median)", "ours ÷ peer"], rows)


def pick(records, path, case, side, impl_part=""):
    return next((r for r in records if r["path"] == path and r["case"] == case and r["side"] == side
                 and impl_part in r["impl"]), None)


def cases_of(records, path):
    return list(dict.fromkeys(r["case"] for r in records if r["path"] == path))


def nufft_table(records):
    rows = []
    for c in cases_of(records, "nufft"):
        o, p = pick(records, "nufft", c, "ours"), pick(records, "nufft", c, "peer")
        prm = o["params"]

        def stages(r):
            if r is None or r["status"] != "ok":
                return f"{r['status']}: {r['reason']}" if r else "–"
            return " / ".join(ms(med(r["stages"].get(s, []))) for s in ("plan", "setpts", "execute"))

        def total(r):
            return sum(med(r["stages"][s]) for s in ("plan", "setpts", "execute")) if r and r["status"] == "ok" else None

        def phases(r):
            # the debug execute's device time per phase, summed over its batches
            ph = (r or {}).get("extra", {}).get("phases_ms") or []
            names = list(dict.fromkeys(k for d in ph for k in d if k != "total"))
            return ", ".join(f"{k} {sum(d.get(k, 0.0) for d in ph):.3f}" for k in names) or "–"

        both = o and p and o["status"] == p["status"] == "ok"
        size = "x".join(map(str, prm.get("modes") or [])) if prm.get("type") != 3 else f"N {prm.get('n', 0):.0e}"
        rows.append((c, size, f"{prm.get('m', 0):.0e}", stages(o), stages(p),
                     f"{o['median_s'] / p['median_s']:.2f}" if both else "–",
                     f"{total(o) / total(p):.2f}" if both else "–",
                     f"{err(o['rel_error'] if o else None)} / {err(p['rel_error'] if p else None)}", phases(o)))
    return table(["case", "modes", "M", "farfield plan / setpts / execute ms", "cuFINUFFT plan / setpts / execute ms",
                  "execute ÷", "total ÷", "error farfield / cuFINUFFT", "farfield execute phases (device ms, debug run)"], rows)


def spread_table(records):
    rows = []
    groups = {}
    for c in cases_of(records, "spread"):
        o = pick(records, "spread", c, "ours")
        if o and o["status"] == "ok":
            p = o["params"]
            groups.setdefault((p["dim"], p["grid"], p["w"], p["prec"]), []).append(o)
    for key, rs in groups.items():
        best = min(r["median_s"] for r in rs)
        for o in rs:
            c = o["case"]
            p = pick(records, "spread", c, "peer")
            x = o["extra"]
            cpu = p["stages"] if p and p["status"] == "ok" else {}
            rows.append((f"{key[0]}D {key[1]}", key[2], f"{x.get('m', 0):.0e}", f"{x.get('asm', 0):.2f}", o["params"]["method"],
                         x.get("auto_picked", "–"),
                         " / ".join(ms(med(o["stages"].get(s, []))) for s in ("setpts", "spread", "interp")),
                         " / ".join(ms(med(cpu.get(s, []))) for s in ("spread", "interp")),
                         f"{o['median_s'] / p['median_s']:.3f}" if cpu else "–", f"{o['median_s'] / best:.2f}",
                         f"{x['wall_s']:.1f}" if isinstance(x.get("wall_s"), (int, float)) else "–"))
    return table(["grid", "w", "M", "ASM", "method", "AUTO picked", "GPU setpts / spread / interp ms", "CPU spread / interp ms",
                  "GPU ÷ CPU (spread)", "÷ best method", "process s"], rows)


def ewald_table(records):
    rows = []
    for r in (r for r in records if r["path"] == "ewald"):
        x = r["extra"]
        rows.append((r["case"], r["side"], r["impl"], r["status"] if r["status"] != "ok" else x.get("setting", ""),
                     x.get("params", r.get("reason") or ""), err(r["rel_error"]), ms(r["median_s"]),
                     ms(min(r["repetitions"])) if r["repetitions"] else "–"))
    return table(["case", "side", "code", "setting", "parameters / reason", "force error", "median ms", "fastest ms"], rows)


def fmm_table(records):
    rows = []
    for c in cases_of(records, "fmm"):
        for o in (r for r in records if r["path"] == "fmm" and r["case"] == c and r["side"] == "ours"):
            p = pick(records, "fmm", c, "peer")
            if o["status"] != "ok":
                rows.append((c, o["impl"], o["status"], o["reason"], "", "", "", ""))
                continue
            x = o["extra"]
            st = " / ".join(f"{k} {ms(med(v))}" for k, v in o["stages"].items())
            if x.get("tree_steps"):  # the tree stage's steps (CLI's tree_steps, seconds)
                st += " (tree: " + " / ".join(f"{k} {ms(v)}" for k, v in x["tree_steps"].items()) + ")"
            ok = p and p["status"] == "ok"
            rows.append((c, o["impl"], f"p {x.get('p')}, D {x.get('depth')}", st, ms(o["median_s"]),
                         ms(p["median_s"]) if ok else "–", f"{o['median_s'] / p['median_s']:.3f}" if ok else "–",
                         f"{err(x.get('rel_error_potential'))} / {err(x.get('rel_error_field'))}"))
    return table(["case", "code", "p, D", "stages ms", "CUDA execute ms", "CPU execute ms", "CUDA ÷ CPU", "error φ / E"], rows)


DETAIL = {"nufft": ("NUFFT: farfield CUDA vs cuFINUFFT 2.5.1 (device arrays; median of the repetitions)", nufft_table),
          "spread": ("Spreading: CUDA kernels (device arrays) vs the CPU spreader, per method", spread_table),
          "ewald": ("Ewald/SPME, JAC DHFR: fastest setting at the force-error target, per code", ewald_table),
          "fmm": ("FMM: CUDA vs CPU, same p and D", fmm_table)}


def not_ok(records):
    """One row per (path, side, code, status, reason), with the cases it holds."""
    groups = {}
    for r in records:
        if r["status"] != "ok":
            key = (r["path"], r["side"], r["impl"], r["status"], (r.get("reason") or "").replace("|", "/")[:160])
            groups.setdefault(key, []).append(r["case"])
    rows = [(*k[:4], len(v), ", ".join(v[:4]) + (f", … ({len(v) - 4} more)" if len(v) > 4 else ""), k[4])
            for k, v in groups.items()]
    return table(["path", "side", "code", "status", "cases", "which", "reason"], rows) if rows else "None."


def markdown(doc):
    m = doc["machine"]
    g = (m.get("gpus") or [{}])[0]
    git = m.get("git", {})
    bundle = git.get("bundle", {})
    recs = doc["records"]
    out = [f"# GPU kit results: {m.get('gpu_name') or 'no GPU'}, {doc['created_utc'][:10]} ({doc['mode']})", "",
           "Written by `benches/gpu/kit.py` (run with `bash benches/gpu/run.sh` on the GPU machine, after "
           "`bash scripts/gpu-bundle.sh` here); every repetition, case parameter and machine detail is in "
           "`results.json` beside this file. Ratios are ours ÷ peer of the medians (below 1: ours faster).", "",
           "## Machine", "",
           f"- GPU: {g.get('name')} (compute capability {g.get('compute_cap')}, {g.get('memory.total')} MiB), driver "
           f"{g.get('driver_version')}, CUDA {m.get('cuda', {}).get('driver_cuda')} (driver) / nvcc {m.get('cuda', {}).get('nvcc')}",
           f"- clocks at the start: SM {g.get('clocks.sm')} of {g.get('clocks.max.sm')} MHz, memory {g.get('clocks.mem')} of "
           f"{g.get('clocks.max.mem')} MHz",
           f"- host: {m.get('cpu', {}).get('model')}, {m.get('cpu', {}).get('logical_cpus')} logical CPUs; Python {m.get('python')}; "
           + ", ".join(f"{k} {v}" for k, v in m.get("packages", {}).items()),
           f"- binaries built from commit {bundle.get('commit', '?')}" + (" (uncommitted changes)" if bundle.get("dirty") else "")
           + (f"; tree at {git['tree_commit']}" if git.get("tree_commit") else ""),
           f"- command: `{doc['command_line']}`", ""]
    out += ["## Time per path", "",
            table(["path", "budget s", "wall s", "cases", "ok", "timeout", "error", "skipped"],
                  [(p, v["budget_s"], f"{v['wall_s']:.1f}", v["cases"], *(v["status_counts"].get(s, 0) for s in STATUSES))
                   for p, v in doc["paths"].items()]), ""]
    for k, v in (doc.get("setup") or {}).items():
        out.append(f"- setup, {k}: {v}")
    out += ["", "## Ratios (ours ÷ peer, medians)", "", ratio_table(recs), ""]
    for path in doc["paths"]:
        title, fn = DETAIL[path]
        if any(r["path"] == path for r in recs):
            out += [f"## {title}", "", fn(recs), ""]
    out += ["## Not measured, timed out or failed", "", not_ok(recs), ""]
    return "\n".join(out)


def write_markdown(folder, doc):
    path = Path(folder) / "README.md"
    path.write_text(markdown(doc))
    return path
