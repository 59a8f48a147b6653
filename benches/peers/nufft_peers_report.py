"""Tables and the benchmark-set summary (M = 1e7; 1D 1e6, 2D 1000², 3D 128³ modes) of the
same-run NUFFT comparison (`nufft_vs_finufft.py`).

Input: the list of case records built by `nufft_vs_finufft.timed_cases`, one per (case, tol):
    {"case", "type", "dim", "modes", "points", "tol", "prec",
     "runs": {threads: {"ours": {...}, "finufft": {...}, "ducc0": {...} or None}},
     "efficiency": {"1->T": {lib: {"setup", "exec", "total"}}}}
with times in seconds (setup_s, exec_s, total_s), errors relative l2, threads an int (0 = all
cores). Parallel efficiency from 1 to T threads: t_1 / (T * t_T), separately for setup and
execute (1.0 = perfect scaling).
"""

import statistics

from nufft_peers_run import threads_count, threads_label

LIBS = ("ours", "finufft", "ducc0")

# the benchmark set: M = 1e7, these modes, types 1 and 2, these tolerances, f64
ACCEPT_CASES = {(1, 3, (128,) * 3), (2, 3, (128,) * 3), (1, 2, (1000,) * 2), (2, 2, (1000,) * 2),
                (1, 1, (10**6,)), (2, 1, (10**6,))}
ACCEPT_TOLS = {1e-3, 1e-6, 1e-9, 1e-12}


def fmt_t(x):
    return "-" if x is None else (f"{x:.3f}" if x >= 0.01 else f"{x:.4f}")


def fmt_e(x):
    return "-" if x is None else f"{x:.1e}"


def fmt_p(x):
    return "-" if x is None else f"{100 * x:.0f}%"


def efficiencies(runs):
    """{"1->T": {lib: {"setup", "exec", "total"}}} for every T != 1 in `runs` (needs T = 1)."""
    if 1 not in runs:
        return {}
    res = {}
    for t, r in runs.items():
        if t == 1 or threads_count(t) <= 1:
            continue
        p = threads_count(t)
        pair = {}
        for lib in LIBS:
            a, b = runs[1][lib], r[lib]
            if a is None or b is None:
                pair[lib] = None
                continue
            pair[lib] = {k: a[f"{k}_s"] / (p * b[f"{k}_s"]) if b[f"{k}_s"] > 0 else None
                         for k in ("setup", "exec", "total")}
        res[f"1->{t}"] = pair
    return res


def sigma_w(ours, ducc):
    """'sigma, w' of ours / ducc0 (ducc0's from its verbosity report, when measured)."""
    a = f"{ours['upsampfac']:.3g}, {ours['kernel_width']}"
    p = ducc.get("params") if ducc else None
    if not p:
        return a + " / -"
    s = p["sigma"]
    sig = f"{s[0]:.3g}" if max(s) - min(s) < 5e-3 else "x".join(f"{v:.3g}" for v in s)
    return f"{a} / {sig}, {p['w']}"


def print_tables(records, args):
    print(f"\nTimed cases: {args.prec}, {'best of ' + str(args.repeat) if args.repeat > 1 else 'one run'} per "
          f"library and thread count (the setup in every repetition; each of our runs is a fresh process); "
          f"setup = plan + setpts (ducc0: its plan constructor), exec = one execute, total = setup + exec "
          f"(seconds); ratios > 1 mean ours is slower; errors: relative l2 on {args.check} random outputs "
          f"against the same f64 direct sums; sigma, w: oversampling factor and kernel width (ducc0's from "
          f"its verbosity report)\n")
    print("| case | tol | threads | ours setup + exec = total (s) | FINUFFT total (s) | ducc0 setup + exec = total (s) | "
          "ours/ducc0 | ours/FINUFFT | err ours / FINUFFT / ducc0 | sigma, w ours / ducc0 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for rec in records:
        for t, r in rec["runs"].items():
            o, f, u = r["ours"], r["finufft"], r["ducc0"]
            ducc = f"{fmt_t(u['setup_s'])} + {fmt_t(u['exec_s'])} = {fmt_t(u['total_s'])}" if u else "-"
            r_u = f"{o['total_s'] / u['total_s']:.2f}" if u else "-"
            print(f"| {rec['case']} | {fmt_tol(rec['tol'])} | {threads_label(t)} | {fmt_t(o['setup_s'])} + "
                  f"{fmt_t(o['exec_s'])} = {fmt_t(o['total_s'])} | {fmt_t(f['total_s'])} | {ducc} | {r_u} | "
                  f"{o['total_s'] / f['total_s']:.2f} | {fmt_e(o['rel_error'])} / {fmt_e(f['rel_error'])} / "
                  f"{fmt_e(u['rel_error']) if u else '-'} | {sigma_w(o, u)} |")
    pairs = sorted({p for rec in records for p in rec["efficiency"]}, key=lambda p: (threads_count(int(p[3:])), p == "1->0"))
    for pair in pairs:
        t = int(pair[3:])
        print(f"\nParallel efficiency from 1 to {threads_label(t)} threads, t1 / ({threads_count(t)} * t{t or 'all'}), "
              f"setup / exec (100% = perfect scaling)\n")
        print("| case | tol | ours setup / exec | FINUFFT setup / exec | ducc0 setup / exec |")
        print("|---|---|---|---|---|")
        for rec in records:
            e = rec["efficiency"].get(pair)
            if not e:
                continue
            cells = [f"{fmt_p(e[lib]['setup'])} / {fmt_p(e[lib]['exec'])}" if e[lib] else "-" for lib in LIBS]
            print(f"| {rec['case']} | {fmt_tol(rec['tol'])} | " + " | ".join(cells) + " |")


def fmt_tol(x):
    """1e-03 -> 1e-3."""
    return f"{x:.0e}".replace("e-0", "e-").replace("e+0", "e")


def acceptance(records, mem, threads):
    """Prints the benchmark set's summary lines (threads: the thread counts asked for); returns them
    as a dict with every number."""
    t_acc = 2 if 2 in threads else max(threads, key=threads_count)
    res = {"threads": t_acc}
    lines = []

    def verdict(ok):
        return "yes" if ok else "NO"

    # coverage: is this run the acceptance set?
    have = {(rec["type"], rec["dim"], tuple(rec["modes"]), rec["tol"]) for rec in records
            if rec["points"] == 10**7 and rec["prec"] == "f64"}
    missing = [(ty, d, n, tol) for ty, d, n in ACCEPT_CASES for tol in ACCEPT_TOLS if (ty, d, n, tol) not in have]
    full = not missing and 1 in threads and 2 in threads
    res["full_acceptance_set"] = full
    why = []
    if any(rec["points"] != 10**7 for rec in records):
        why.append("M != 1e7 (--quick)")
    if missing:
        why.append(f"{len(missing)} of 24 (case, tol) not run at M = 1e7, f64")
    if not (1 in threads and 2 in threads):
        why.append("threads 1 and 2 not both run")
    if not records:
        why = ["no timed cases (--no-timed)"]
    lines.append(f"- run covers the acceptance set (M = 1e7; 1D 1e6, 2D 1000^2, 3D 128^3; types 1, 2; tol 1e-3, "
                 f"1e-6, 1e-9, 1e-12; f64; threads 1 and 2): {verdict(full)}" + ("" if full else f" ({'; '.join(why)})"))

    # time ratios at t_acc
    ratios = [(rec["runs"][t_acc]["ours"]["total_s"] / rec["runs"][t_acc]["ducc0"]["total_s"],
               f"{rec['case']}, tol {fmt_tol(rec['tol'])}")
              for rec in records if t_acc in rec["runs"] and rec["runs"][t_acc]["ducc0"]]
    if ratios:
        worst = max(ratios)
        med = statistics.median(r for r, _ in ratios)
        res.update(max_ratio=worst[0], max_ratio_case=worst[1], median_ratio=med, ratios=len(ratios),
                   max_ratio_ok=worst[0] <= 1.0, median_ratio_ok=med <= 0.8)
        lines.append(f"- total time ours/ducc0 at {threads_label(t_acc)} threads: max {worst[0]:.2f} ({worst[1]}) "
                     f"<= 1.0? {verdict(worst[0] <= 1.0)}; median {med:.2f} over {len(ratios)} cases <= 0.8? "
                     f"{verdict(med <= 0.8)}")

    # errors <= 10 tol, every run of every library
    for lib in LIBS:
        errs = [(r[lib]["rel_error"] / rec["tol"], f"{rec['case']}, tol {fmt_tol(rec['tol'])}, {threads_label(t)} threads")
                for rec in records for t, r in rec["runs"].items() if r[lib] and r[lib]["rel_error"] is not None]
        if not errs:
            continue
        bad = [e for e in errs if e[0] > 10]
        worst = max(errs)
        res[f"errors_{lib}"] = {"ok": not bad, "runs": len(errs), "over_10_tol": len(bad),
                                "worst_err_over_tol": worst[0], "worst_case": worst[1]}
        lines.append(f"- errors <= 10 tol, {lib}: {len(errs) - len(bad)} of {len(errs)} runs; worst "
                     f"{worst[0]:.2g} x tol ({worst[1]}) -> {verdict(not bad)}")

    # parallel efficiency 1 -> 2
    for lib in LIBS:
        effs = {k: [(rec["efficiency"]["1->2"][lib][k], f"{rec['case']}, tol {fmt_tol(rec['tol'])}") for rec in records
                    if "1->2" in rec["efficiency"] and rec["efficiency"]["1->2"][lib]
                    and rec["efficiency"]["1->2"][lib][k] is not None] for k in ("setup", "exec")}
        if not effs["setup"]:
            continue
        mins = {k: min(v) for k, v in effs.items()}
        ok = all(v[0] >= 0.85 for v in mins.values())
        res[f"efficiency_{lib}"] = {k: {"min": v[0], "min_case": v[1],
                                        "median": statistics.median(e for e, _ in effs[k])} for k, v in mins.items()}
        res[f"efficiency_{lib}"]["ok"] = ok
        lines.append(f"- parallel efficiency 1 -> 2 threads >= 85%, {lib}: setup min {fmt_p(mins['setup'][0])} "
                     f"({mins['setup'][1]}), exec min {fmt_p(mins['exec'][0])} ({mins['exec'][1]}) -> {verdict(ok)}")

    if mem:
        ok = mem["peak_ratio_vs_ducc0"] <= 1.1
        res["peak_rss_ratio"] = mem["peak_ratio_vs_ducc0"]
        res["peak_rss_ok"] = ok
        lines.append(f"- peak RSS ours/ducc0, 3D type 1 (M = {mem['points']:.0e}, N = {mem['modes'][0]}^3, "
                     f"{mem['threads']} threads): {mem['peak_ratio_vs_ducc0']:.2f} <= 1.1? {verdict(ok)} "
                     f"(working memory {mem['working_ratio_vs_ducc0']:.2f})")
    else:
        lines.append("- peak RSS ours/ducc0: not measured (add --memory)")

    print("\nAcceptance" + ("" if full else "; this run is not the full acceptance set, so the lines "
                                       "below describe only the cases run") + ":\n")
    print("\n".join(lines))
    return res
