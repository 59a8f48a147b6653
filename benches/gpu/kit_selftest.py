"""Self-test of the GPU kit, without a GPU, in seconds (`python3 benches/gpu/kit.py --selftest`,
or `bash benches/gpu/selftest.sh`): the kit's own logic, and one real run of the farfield CLI
on the CPU read through the same parser as the GPU runs, so that a change of the CLI's JSON or
options, or of the benchmark scripts' options, fails here rather than on a GPU machine.

Checks: the case list (full, --quick, --only; the NUFFT cases as the NUFFT script parses them);
the timeouts (a child that sleeps past its timeout, with a grandchild holding its pipes, is
recorded as "timeout" and does not hang; the streamed runner records a hung case as "timeout"
and a crashing one as "error" and goes on with the rest; a spent budget skips); the JSON
writer and its schema check; the ratio and Markdown tables from synthetic records; the parsers
of the scripts' JSON; every option the kit passes to a script or the CLI is in its --help;
`farfield bench spread --backend cpu` (tiny) through `spread_records`, and the kernel width of
every spreading tolerance; the orchestrator end to end with stub runners.

The farfield CLI is $FARFIELD_BIN or $FARFIELD_CLI_BIN, else $CARGO_TARGET_DIR/release/farfield,
else target/release/farfield; without one the self-test fails (it does not skip).
The last line is "N passed, M failed"; the exit status is non-zero if any check failed.
"""

import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import traceback
from pathlib import Path

import kit_cases
import kit_machine
import kit_proc
import kit_report
import kit_runners

ROOT = Path(__file__).resolve().parents[2]
CHECKS = []


def check(fn):
    CHECKS.append(fn)
    return fn


def farfield_bin():
    for var in ("FARFIELD_BIN", "FARFIELD_CLI_BIN"):
        if os.environ.get(var):
            return Path(os.environ[var])
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "target")
    return target / "release" / "farfield"


def synthetic(path, case_id, side, impl, median, status="ok", params=None, extra=None, stages=None, rel_error=None):
    case = {"id": case_id, "params": params or {}}
    reps = [median * f for f in (1.1, 1.0, 0.9)] if status == "ok" else []
    return kit_runners.record(path, case, side, impl, status, reps, "time_s", stages, rel_error,
                              None if status == "ok" else f"synthetic {status}", extra=extra)


# --------------------------------------------------------------------------------------------- case list
@check
def case_list_full_quick_only():
    full, quick = kit_cases.expand(False), kit_cases.expand(True)
    count = lambda cs, p: sum(1 for c in cs if c["path"] == p)
    assert count(full, "nufft") == 34, count(full, "nufft")  # 6 x (1e-6 f64, 1e-3, 1e-9, f32 1e-5, 1e-3) + 2 t3 + 2 ntrans
    assert count(full, "spread") == 3 * 4 * 6 + 3 * 2 * 6, count(full, "spread")  # f64 4 widths, f32 2
    assert count(full, "ewald") == 2 and count(full, "fmm") == 3
    assert [count(quick, p) for p in kit_cases.ORDER] == [6, 6, 1, 1], [count(quick, p) for p in kit_cases.ORDER]
    for cs in (full, quick):
        ids = [(c["path"], c["id"]) for c in cs]
        assert len(ids) == len(set(ids)), "case ids must be unique"
        assert [c["path"] for c in cs] == sorted((c["path"] for c in cs), key=kit_cases.ORDER.index), "paths in run order"
        assert all(c["timeout_s"] > 0 and isinstance(c["params"], dict) for c in cs)
    # --quick: one size per path
    q12 = {(tuple(c["params"]["modes"]), c["params"]["m"]) for c in quick if c["path"] == "nufft" and c["params"]["type"] != 3}
    assert len(q12) == 1, q12
    assert len({(c["params"]["dim"], c["params"]["grid"]) for c in quick if c["path"] == "spread"}) == 1
    # the first spreading cases: every method at one size, then AUTO at every size
    first = [c["params"]["method"] for c in full if c["path"] == "spread"][:6]
    assert sorted(first) == sorted(kit_cases.SPREAD_METHODS), first
    autos = [c for c in full if c["path"] == "spread"][6:17]
    assert all(c["params"]["method"] == "auto" for c in autos)
    # one process per size, width and precision run: the 108 spreading cases in 3·4 + 3·2 groups
    # of the other methods plus the first group and the AUTO singletons, in case-list order
    spread = [c for c in full if c["path"] == "spread"]
    groups = kit_runners.spread_groups(spread)
    assert [c for g in groups for c in g] == spread
    assert len(groups[0]) == len(kit_cases.SPREAD_METHODS) and len(groups) <= 3 * 4 * 2 + 12, len(groups)
    assert all(len({kit_runners.spread_key(c["params"]) for c in g}) == 1 for g in groups)
    # --only keeps the run order and refuses unknown names
    assert [c["path"] for c in kit_cases.expand(False, "fmm,nufft")][0] == "nufft"
    assert {c["path"] for c in kit_cases.expand(True, "spread")} == {"spread"}
    try:
        kit_cases.expand(False, "nufft,bogus")
        raise AssertionError("an unknown path was accepted")
    except ValueError:
        pass


@check
def nufft_cases_parse_in_the_script():
    sys.path.insert(0, str(ROOT / "benches" / "peers"))
    import nufft_vs_cufinufft as script
    for c in kit_cases.expand(False, "nufft"):
        s = script.parse_spec(kit_cases.nufft_spec(c))
        p = c["params"]
        assert s["id"] == c["id"] and s["type"] == p["type"] and s["dim"] == p["dim"], (s, p)
        assert s["m"] == p["m"] and s["prec"] == p["prec"] and abs(s["tol"] - p["tol"]) <= 1e-12 * p["tol"], (s, p)
        assert s["ntrans"] == p["ntrans"]
        assert s["modes"] == p.get("modes") if p["type"] != 3 else (s["n"] == p["n"] and s["freq"] == p["freq"])


# --------------------------------------------------------------------------------------------- timeouts
@check
def timeout_kills_child_and_grandchild():
    code = "import subprocess, sys, time; subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)']); time.sleep(60)"
    t = time.monotonic()
    r = kit_proc.run_cmd([sys.executable, "-c", code], 1.0)
    wall = time.monotonic() - t
    assert r["status"] == "timeout", r
    assert wall < 8, f"the timeout took {wall:.1f} s (a grandchild kept the pipes?)"
    ok = kit_proc.run_cmd([sys.executable, "-c", "print('x')"], 10)
    assert ok["status"] == "ok" and ok["stdout"].strip() == "x", ok
    bad = kit_proc.run_cmd([sys.executable, "-c", "import sys; sys.exit(3)"], 10)
    assert bad["status"] == "error" and bad["rc"] == 3, bad


STUB = textwrap.dedent('''
    import json, os, sys, time
    out, ids = sys.argv[1], sys.argv[2].split(";")
    done = []
    for i in ids:
        if i == "hang":
            time.sleep(60)
        if i == "crash":
            sys.exit(7)
        done.append({"id": i, "ours": {"status": "ok", "execute": [0.001]}, "peer": {"status": "ok", "execute": [0.002]}})
        with open(out + ".tmp", "w") as fh:
            json.dump({"cases": done}, fh)
        os.replace(out + ".tmp", out)
''')


@check
def streamed_runner_survives_hang_and_crash():
    with tempfile.TemporaryDirectory() as tmp:
        stub = Path(tmp) / "stub.py"
        stub.write_text(STUB)
        cases = [{"id": i} for i in ("a", "hang", "b", "crash", "c")]
        make = lambda rem, j: [sys.executable, str(stub), j, ";".join(c["id"] for c in rem)]
        t = time.monotonic()
        res, events = kit_proc.run_stream(make, cases, str(Path(tmp) / "s.json"), timeout_s=1.5, startup_s=1.0, poll_s=0.05)
        wall = time.monotonic() - t
        assert wall < 12, f"{wall:.1f} s"
        assert res["hang"]["status"] == "timeout", res["hang"]
        assert res["crash"]["status"] == "error", res["crash"]
        assert all("ours" in res[i] for i in ("a", "b", "c")), res
        assert len(events) == 3, events
        recs = [r for c in cases for r in kit_runners.nufft_records(dict(c, params={}), res[c["id"]])]
        assert {r["status"] for r in recs if r["case"] == "hang"} == {"timeout"}
        kit_report.validate(doc_of(recs))
        # a script that dies at start (an import) is given up after two tries
        dead = lambda rem, j: [sys.executable, "-c", "import sys; sys.exit(5)"]
        res, events = kit_proc.run_stream(dead, cases, str(Path(tmp) / "d.json"), 5, poll_s=0.05)
        assert len(events) == 2 and all(r["status"] == "error" for r in res.values()) and len(res) == 5, (events, res)
        # a spent budget starts nothing and skips every case
        res, events = kit_proc.run_stream(make, cases, str(Path(tmp) / "t.json"), 1.0, deadline=time.monotonic() - 1)
        assert not events and all(r["status"] == "skipped" for r in res.values()), res


# --------------------------------------------------------------------------------------------- results
def doc_of(records, paths=None):
    return {"schema": 1, "created_utc": "2026-01-01T00:00:00+00:00", "command_line": "kit.py --selftest", "mode": "full",
            "machine": {"gpu_name": "Stub GPU", "gpus": [{"name": "Stub GPU"}]}, "setup": {},
            "paths": paths or {}, "records": records}


def synthetic_records():
    np3 = {"type": 1, "dim": 3, "modes": [64, 64, 64], "m": 10**6, "prec": "f64", "tol": 1e-6, "ntrans": 1}
    st = lambda a, b, c: {"plan": [a], "setpts": [b], "execute": [c]}
    sp = lambda m: {"dim": 3, "grid": 128, "m": 10**6, "w": 7, "tol": 1e-6, "method": m, "prec": "f64"}
    sx = {"m": 10**6, "asm": 0.5}
    return [
        synthetic("nufft", "3d-t1", "ours", "farfield CUDA", 0.002, params=np3, stages=st(0.01, 0.001, 0.002), rel_error=3e-7),
        synthetic("nufft", "3d-t1", "peer", "cuFINUFFT 2.5.1", 0.004, params=np3, stages=st(0.02, 0.002, 0.004), rel_error=4e-7),
        synthetic("nufft", "3d-t2", "ours", "farfield CUDA", 0.002, params=dict(np3, type=2), status="timeout"),
        synthetic("nufft", "3d-t2", "peer", "cuFINUFFT 2.5.1", 0.004, params=dict(np3, type=2)),
        synthetic("spread", "sm", "ours", "farfield CUDA sm", 0.001, params=sp("sm"), extra=sx,
                  stages={"setpts": [0.1], "spread": [0.001], "interp": [0.001]}),
        synthetic("spread", "sm", "peer", "farfield CPU", 0.010, params=sp("sm"), stages={"spread": [0.01], "interp": [0.01]}),
        synthetic("spread", "auto", "ours", "farfield CUDA gm-sort", 0.002, params=sp("auto"), extra=dict(sx, auto_picked="gm-sort"),
                  stages={"setpts": [0.1], "spread": [0.002], "interp": [0.001]}),
        synthetic("spread", "auto", "peer", "farfield CPU", 0.010, params=sp("auto"), stages={"spread": [0.01], "interp": [0.01]}),
        synthetic("ewald", "jac-f32", "ours", "farfield spme host", 0.0006, extra={"setting": "tol 1.5e-05", "params": "xi 4.7"},
                  rel_error=7.9e-6),
        synthetic("ewald", "jac-f32", "peer", "OpenMM CUDA single PME", 0.0004, rel_error=8e-6),
        synthetic("ewald", "jac-f32", "peer", "OpenMM OpenCL single PME", 0.0005, rel_error=8e-6),
        synthetic("ewald", "jac-f32", "peer", "OpenMM HIP", 1, status="skipped"),
        synthetic("fmm", "uniform", "ours", "farfield CUDA FMM", 0.05, extra={"p": 9, "depth": 5}, stages={"m2l": [0.02]}),
        synthetic("fmm", "uniform", "peer", "farfield CPU FMM", 1.0),
    ]


@check
def ratio_and_markdown_tables():
    recs = synthetic_records()
    got = {(r["path"], r["case"], r["peer"]): round(r["ratio"], 6) for r in kit_report.ratios(recs)}
    want = {("nufft", "3d-t1", "cuFINUFFT 2.5.1"): 0.5, ("spread", "sm", "farfield CPU"): 0.1,
            ("spread", "auto", "farfield CPU"): 0.2, ("ewald", "jac-f32", "OpenMM CUDA single PME"): 1.5,
            ("ewald", "jac-f32", "OpenMM OpenCL single PME"): 1.2, ("fmm", "uniform", "farfield CPU FMM"): 0.05}
    assert got == want, got
    paths = {p: {"budget_s": 10, "wall_s": 1.0, "cases": 1, "status_counts": {"ok": 1}} for p in kit_cases.ORDER}
    md = kit_report.markdown(doc_of(recs, paths))
    for needle in ("| nufft | 3d-t1 | farfield CUDA | 2.000 | cuFINUFFT 2.5.1 | 4.000 | 0.50 |",
                   "| ewald | jac-f32 | farfield spme host | 0.600 | OpenMM CUDA single PME | 0.400 | 1.50 |",
                   "gm-sort", "÷ best method", "| nufft | ours | farfield CUDA | timeout | 1 | 3d-t2 |", "OpenMM HIP"):
        assert needle in md, f"{needle!r} not in the Markdown:\n{md}"
    # the spreading table: auto (2 ms) is 2.00x the best method (sm, 1 ms)
    assert "| auto | gm-sort |" in md and "| 2.00 |" in md, md


@check
def json_writer_and_schema():
    recs = synthetic_records()
    with tempfile.TemporaryDirectory() as tmp:
        path = kit_report.write_json(tmp, doc_of(recs))
        back = json.loads(path.read_text())
    assert len(back["records"]) == len(recs)
    for r in back["records"]:
        assert {"path", "case", "side", "repetitions", "status"} <= set(r), r
        assert isinstance(r["repetitions"], list)
    for broken, why in ((dict(recs[0], repetitions="1.0"), "repetitions"), (dict(recs[0], status="fine"), "status"),
                        (dict(recs[0], median_s=None), "median_s"), (dict(recs[2], reason=None), "reason"),
                        ({k: v for k, v in recs[0].items() if k != "side"}, "side")):
        try:
            kit_report.validate(doc_of([broken]))
            raise AssertionError(f"a record with bad {why} passed the schema check")
        except ValueError:
            pass
    try:
        kit_report.validate({"records": []})
        raise AssertionError("a document without its top-level keys passed")
    except ValueError:
        pass
    # committed results carry no absolute path of the repository
    rel = kit_report.relative_paths({"a": [f"{ROOT}/build-gpu/x", str(ROOT), 3]}, ROOT)
    assert rel == {"a": ["build-gpu/x", ".", 3]}, rel


@check
def parsers_of_the_scripts_json():
    case = lambda path, cid, **p: {"path": path, "id": cid, "params": p}
    # nufft_vs_cufinufft.py --json: one case
    r = {"id": "x", "wall_s": 3.0, "ours": {"status": "ok", "plan": [0.1, 0.1], "setpts": [0.01, 0.02], "execute": [0.003, 0.001],
                                             "rel_error": 1e-7, "info": {"kernel_width": 7}, "setpts_from": "device arrays"},
         "peer": {"status": "error", "message": "boom", "plan": [], "setpts": [], "execute": []}}
    o, p = kit_runners.nufft_records(case("nufft", "x"), r)
    assert o["status"] == "ok" and o["median_s"] == 0.002 and o["stages"]["plan"] == [0.1, 0.1] and o["rel_error"] == 1e-7
    assert p["status"] == "error" and p["reason"] == "boom"
    # the per-phase device times of the debug execute, from the library's line, reach the record
    sys.path.insert(0, str(ROOT / "benches" / "peers"))
    import nufft_vs_cufinufft as script
    ph = script.phases_of("[farfield nufft cuda] plan stages (host ms): device 1.0\n"
                          "[farfield nufft cuda] execute vectors 0..1 (ms): spread 1.500 fft 0.250 deconv 0.125 | total 1.875 ms\n")
    assert ph == [{"spread": 1.5, "fft": 0.25, "deconv": 0.125, "total": 1.875}], ph
    r["ours"]["phases_ms"] = ph
    o, _ = kit_runners.nufft_records(case("nufft", "x"), r)
    assert o["extra"]["phases_ms"] == ph, o
    # ewald_vs_openmm.py --json: rows of one system
    rows = {"JAC DHFR": [
        {"code": "reference", "status": "reference", "time_s": 14.0, "cached": True},
        {"code": "farfield spme", "setting": "tol 1.5e-05", "time_s": 0.0005, "median_s": 0.0006, "repeats": 20,
         "force_err": 7.9e-6, "params": "xi 4.7"},
        {"code": "farfield spme", "setting": "tol 3e-04", "time_s": 0.0002, "median_s": 0.0002, "force_err": 2e-4, "params": "-"},
        {"code": "farfield spme host", "setting": "tol 1.5e-05", "time_s": 0.0007, "times_s": [0.0007, 0.0008, 0.0009],
         "force_err": 7.9e-6, "params": "xi 4.7"},
        {"code": "farfield spme host", "setting": "tol 1e-05", "status": "error", "reason": "device error"},
        {"code": "OpenMM CUDA single PME", "setting": "-", "status": "unavailable", "reason": "no plugin", "version": "8.3.1"},
        {"code": "OpenMM OpenCL single PME", "setting": "rc 1.2, tol 2e-05", "time_s": 0.0005, "times_s": [0.0005, 0.0006],
         "force_err": 2e-5, "params": "alpha 2.6"}]}
    recs = {r["impl"]: r for r in kit_runners.ewald_records(case("ewald", "jac-f32", target=1e-5), rows)}
    cli = recs["farfield spme (CLI, device arrays)"]
    assert cli["status"] == "ok" and cli["median_s"] == 0.0006 and cli["repetitions"] == [0.0005], cli
    host = recs["farfield spme (C API, host arrays)"]
    assert host["status"] == "ok" and host["median_s"] == 0.0008 and host["extra"]["failed_settings"][0]["reason"] == "device error"
    assert recs["OpenMM CUDA single PME"]["status"] == "skipped" and recs["OpenMM CUDA single PME"]["reason"] == "no plugin"
    assert recs["OpenMM OpenCL single PME"]["status"] == "error"  # 2e-5 misses the 1e-5 target
    # fmm_cuda.py --json (the CLI's keys)
    sym = {"p": 9, "depth": 5, "n": 1000000, "plan_s": 0.1, "execute_s": 0.05, "reps": 3, "rel_error_potential": 1e-7,
           "rel_error_field": 2e-7, "reference": "direct", "stages": {"tree": 0.01, "m2l": 0.02},
           "m2l_counts": {}, "vs_cpu": {"cpu_execute_s": 1.0, "max_rel_diff_potential": 1e-14, "max_rel_diff_field": 1e-13},
           "tree_steps": {"bounds": 0.001, "keys and sort": 0.009}}
    doc = {"cases": [{"plain": sym, "symmetric": dict(sym, execute_s=0.08)}]}
    recs = kit_runners.fmm_records(case("fmm", "u"), doc, 16)
    assert [r["side"] for r in recs] == ["ours", "ours", "peer"] and recs[2]["median_s"] == 1.0, recs
    assert recs[0]["extra"]["tree_steps"]["keys and sort"] == 0.009, recs[0]
    assert "(tree: bounds 1.000 / keys and sort 9.000)" in kit_report.fmm_table(recs), kit_report.fmm_table(recs)
    for r in recs:
        assert not kit_report.check_record(r), (r, kit_report.check_record(r))


# --------------------------------------------------------------------------------------------- real CLI and scripts
def need_bin():
    b = farfield_bin()
    if not b.exists():
        raise AssertionError(f"the farfield CLI is missing: {b} (build it: cargo build --release -p farfield-cli, "
                             "or set FARFIELD_BIN)")
    return b


@check
def real_cpu_spread_run_through_the_parser():
    ctx = kit_runners.Ctx(ROOT, bin=need_bin(), work=tempfile.gettempdir())
    case = {"path": "spread", "id": "cpu-tiny", "timeout_s": 30,
            "params": {"dim": 2, "grid": 32, "m": 2000, "w": 7, "tol": kit_cases.SPREAD_WIDTH_TOL[7], "method": "auto",
                       "prec": "f64", "reps": 2}}
    r = kit_proc.run_cmd(kit_runners.spread_cmd(ctx, case["params"], backend="cpu"), 30)
    assert r["status"] == "ok", r
    recs = kit_runners.spread_records(case, kit_runners.last_json(r["stdout"]))
    assert len(recs) == 1 and recs[0]["side"] == "peer" and recs[0]["status"] == "ok", recs
    peer = recs[0]
    assert peer["extra"]["w"] == 7 and peer["reason"] is None, peer
    assert set(peer["stages"]) == {"setpts", "spread", "interp"} and peer["median_s"] > 0
    assert not kit_report.check_record(peer), kit_report.check_record(peer)
    assert len(peer["repetitions"]) == 2, peer["repetitions"]
    # single precision through the same parser
    r32 = kit_proc.run_cmd(kit_runners.spread_cmd(ctx, dict(case["params"], prec="f32"), backend="cpu"), 30)
    assert r32["status"] == "ok", r32
    p32 = kit_runners.spread_records(case, kit_runners.last_json(r32["stdout"]))[0]
    assert p32["extra"]["precision"] == "f32" and p32["status"] == "ok", p32
    # a CUDA method the CLI reports as failed (e.g. CSR beyond 2^32 - 1 entries) is an error
    # record of that method alone, with the CLI's message
    obj = dict(kit_runners.last_json(r["stdout"]), backend="cuda",
               cuda_runs=[{"method_requested": "csr", "error": "valid request that is not supported yet: 4394000000 entries"}])
    bad = kit_runners.spread_records(dict(case, params=dict(case["params"], method="csr")), obj, obj["cuda_runs"][0])
    assert [(g["side"], g["status"]) for g in bad] == [("peer", "ok"), ("ours", "error")], bad
    assert "4394000000" in bad[1]["reason"] and not kit_report.check_record(bad[1]), bad[1]
    # every width of the case list from its tolerance, as the binary chooses it
    for w, tol in kit_cases.SPREAD_WIDTH_TOL.items():
        p = dict(case["params"], w=w, tol=tol, reps=1, m=50)
        obj = kit_runners.last_json(kit_proc.run_cmd(kit_runners.spread_cmd(ctx, p, backend="cpu"), 30)["stdout"])
        assert obj["w"] == w, f"tol {tol:g} gives width {obj['w']}, the case list says {w}"


@check
def real_cpu_fmm_and_ewald_json_keys():
    """The keys the FMM parser and the Ewald script read, from real CPU runs of the CLI."""
    b = str(need_bin())
    r = kit_proc.run_cmd([b, "fmm", "--n", "2000", "--tol", "1e-3", "--reps", "2", "--json"], 30)
    assert r["status"] == "ok", r
    obj = kit_runners.last_json(r["stdout"])
    recs = kit_runners.fmm_records({"path": "fmm", "id": "cpu-tiny", "params": {}}, {"cases": [{"plain": obj, "symmetric": None}]})
    ours, peer = recs
    assert ours["status"] == "ok" and ours["extra"]["p"] >= 1 and set(ours["stages"]) >= {"m2l", "p2p"}, ours
    assert peer["status"] == "error"  # a CPU run has no CPU comparison
    with tempfile.TemporaryDirectory() as tmp:
        r = kit_proc.run_cmd([b, "ewald", "--nacl-cells", "2", "--method", "spme", "--tol", "1e-4", "--repeats", "1",
                              "--json", "--out", tmp], 30)
        assert r["status"] == "ok", r
        obj = kit_runners.last_json(r["stdout"])
        read = {"energy", "time_s", "median_s", "real_s", "kspace_s", "xi", "rc", "grid", "order_or_support"}
        assert read <= set(obj), f"the Ewald script reads {sorted(read - set(obj))}, which the CLI no longer writes"
        assert (Path(tmp) / "field.npy").exists()


def help_text(cmd):
    r = kit_proc.run_cmd(cmd, 60)
    assert r["status"] == "ok", r
    return r["stdout"]


def flags(cmd):
    return [a for a in cmd if a.startswith("--")]


@check
def every_option_the_kit_passes_exists():
    b = need_bin()
    ctx = kit_runners.Ctx(ROOT, bin=b, cufinufft_lib="L", cufinufft_py="P", ewald_ref="R", work=tempfile.gettempdir(),
                          openmm_problem="x")
    spread = kit_cases.expand(False, "spread")[0]
    text = help_text([str(b), "bench", "spread", "--help"])
    for f in flags(kit_runners.spread_cmd(ctx, spread["params"])):
        assert f in text, f"farfield bench spread has no {f}"
    for m in kit_cases.SPREAD_METHODS:
        assert f"- {m}:" in text or f"{m}:" in text, f"farfield bench spread has no method {m}"
    for cmd in [kit_runners.ewald_cmd(ctx, c["params"], "J") for c in kit_cases.expand(False, "ewald")] + \
               [kit_runners.fmm_cmd(ctx, c["params"], "J") for c in kit_cases.expand(False, "fmm")]:
        text = help_text([sys.executable, cmd[1], "--help"])
        for f in flags(cmd):
            assert f in text, f"{Path(cmd[1]).name} has no {f}"
    text = help_text([sys.executable, str(kit_runners.NUFFT_SCRIPT), "--help"])
    for f in ("--cufinufft-lib", "--cufinufft-py", "--no-peer", "--lib", "--repeat", "--json", "--case-list"):
        assert f in text, f"nufft_vs_cufinufft.py has no {f}"


@check
def orchestrator_end_to_end_with_stub_runners():
    import kit
    recs = synthetic_records()

    def stub(path):
        def run(ctx, cases, deadline, log):
            return [dict(r, case=c["id"]) for c in cases[:1] for r in recs if r["path"] == path], {"stub": True}
        return run

    saved_runners, saved_machine = dict(kit_runners.RUNNERS), kit_machine.machine
    kit_runners.RUNNERS.update({p: stub(p) for p in kit_cases.ORDER})
    kit_machine.machine = lambda root: {"gpu_name": "Stub GPU", "gpus": [{"name": "Stub GPU"}], "cuda": {},
                                        "cpu": {"model": "stub", "logical_cpus": 1}, "packages": {}, "git": {}}
    saved = sys.stdout, sys.stderr
    try:
        with tempfile.TemporaryDirectory() as tmp:
            sys.stdout = sys.stderr = open(os.devnull, "w")
            rc = kit.main(["--quick", "--only", "nufft,spread,fmm", "--results-dir", str(Path(tmp) / "res"),
                           "--out", str(Path(tmp) / "out")])
            assert rc == 0
            doc = json.loads((Path(tmp) / "res" / "results.json").read_text())
            assert doc["mode"] == "quick" and doc["only"] == ["nufft", "spread", "fmm"] and doc["folder"].endswith("stub-gpu-quick")
            assert set(doc["paths"]) == {"nufft", "spread", "fmm"} and all(v["wall_s"] >= 0 for v in doc["paths"].values())
            assert (Path(tmp) / "out" / doc["folder"] / "README.md").exists()
            kit_report.validate(doc)
    finally:
        if sys.stdout is not saved[0]:
            sys.stdout.close()
        sys.stdout, sys.stderr = saved
        kit_runners.RUNNERS.update(saved_runners)
        kit_machine.machine = saved_machine


def main():
    passed = failed = 0
    t0 = time.monotonic()
    for fn in CHECKS:
        t = time.monotonic()
        try:
            fn()
            passed += 1
            print(f"ok    {fn.__name__} ({time.monotonic() - t:.2f} s)", flush=True)
        except Exception:  # noqa: BLE001  (every failure is reported, then the next check runs)
            failed += 1
            print(f"FAIL  {fn.__name__} ({time.monotonic() - t:.2f} s)\n" + textwrap.indent(traceback.format_exc(), "      "),
                  flush=True)
    print(f"gpu kit self-test: {time.monotonic() - t0:.1f} s")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    sys.exit(main())
