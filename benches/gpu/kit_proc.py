"""Child processes with timeouts for the GPU kit (`benches/gpu/kit.py`).

- `run_cmd(cmd, timeout_s)`: one process (in its own process group, so that a timeout kills
  its children too: a grandchild holding the pipes cannot keep the kit waiting); returns a
  dict with status "ok" / "error" / "timeout", rc, stdout, stderr, wall_s.
- `run_stream(...)`: one process that works through a list of cases and rewrites a JSON file
  after each (`{"cases": [{"id": ...}, ...]}`); every case gets its own timeout, counted from
  the previous case's end. A case that runs past it, or during which the process dies, is
  recorded as "timeout" / "error" and the process is started again on the cases left, so one
  hung or crashing case costs only itself (a process that dies before its first case twice in
  a row fails all the cases left). Used for the NUFFT, whose process start (CuPy,
  NVRTC, cuFINUFFT) is paid once for all cases.

Standard library only.
"""

import json
import os
import signal
import subprocess
import sys
import threading
import time


def _kill_group(p):
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def _reader(stream, sink, echo):
    for line in iter(stream.readline, ""):
        sink.append(line)
        if echo is not None:
            echo.write(line)
            echo.flush()
    stream.close()


def start(cmd, env=None, cwd=None, echo_prefix=None):
    """Starts `cmd` in a new process group with its stdout and stderr collected by threads (and
    stderr echoed to ours, each line prefixed, when `echo_prefix` is given)."""
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd,
                         start_new_session=True, errors="replace")
    out, err = [], []
    echo = _Prefixed(sys.stderr, echo_prefix) if echo_prefix else None
    threads = [threading.Thread(target=_reader, args=(p.stdout, out, None), daemon=True),
               threading.Thread(target=_reader, args=(p.stderr, err, echo), daemon=True)]
    for t in threads:
        t.start()
    return p, out, err, threads


class _Prefixed:
    def __init__(self, f, prefix):
        self.f, self.prefix = f, prefix

    def write(self, s):
        self.f.write(self.prefix + s)

    def flush(self):
        self.f.flush()


def finish(p, threads, timeout_s=None):
    """Waits for `p` up to timeout_s; on timeout kills its process group. Returns True if it
    timed out."""
    timed_out = False
    try:
        p.wait(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(p)
        p.wait()
    for t in threads:
        t.join(timeout=5)
    return timed_out


def run_cmd(cmd, timeout_s, env=None, cwd=None, echo_prefix=None):
    t0 = time.monotonic()
    try:
        p, out, err, threads = start(cmd, env, cwd, echo_prefix)
    except OSError as e:
        return {"status": "error", "rc": None, "stdout": "", "stderr": str(e), "wall_s": 0.0, "cmd": cmd}
    timed_out = finish(p, threads, timeout_s)
    status = "timeout" if timed_out else ("ok" if p.returncode == 0 else "error")
    return {"status": status, "rc": p.returncode, "stdout": "".join(out), "stderr": "".join(err),
            "wall_s": time.monotonic() - t0, "cmd": cmd}


def read_cases(path):
    """The `cases` list of a JSON file being rewritten by a child ([] while absent or partial)."""
    try:
        with open(path) as fh:
            return json.load(fh).get("cases", [])
    except (OSError, ValueError):
        return []


def run_stream(make_cmd, cases, json_path, timeout_s, startup_s=0.0, deadline=None, env=None, cwd=None,
               echo_prefix=None, poll_s=0.2, grace_s=20.0):
    """Runs `make_cmd(remaining_cases, json_file)` until every case is done, timed out, failed or
    skipped. Returns (results, events): results maps case id -> the child's case dict or
    {"status": "timeout" | "error" | "skipped", "reason": ...}; events lists the process starts
    (wall seconds, rc, stderr tail). `deadline` (time.monotonic) stops starting new cases: the
    case in flight finishes (or is cut grace_s after the deadline), the rest are skipped."""
    results, events = {}, []
    remaining = list(cases)
    attempt = barren = 0  # barren: starts in a row that died before reporting any case
    while remaining:
        if deadline is not None and time.monotonic() >= deadline:
            for c in remaining:
                results[c["id"]] = {"status": "skipped", "reason": "path budget spent"}
            break
        attempt += 1
        jpath = f"{json_path}.{attempt}"
        if os.path.exists(jpath):
            os.remove(jpath)
        t0 = time.monotonic()
        try:
            p, out, err, threads = start(make_cmd(remaining, jpath), env, cwd, echo_prefix)
        except OSError as e:
            for c in remaining:
                results[c["id"]] = {"status": "error", "reason": f"cannot start: {e}"}
            break
        last = t0
        allowance = timeout_s + startup_s
        seen = 0
        stop_reason = None
        cut = allowance
        while True:
            done = p.poll() is not None
            got = read_cases(jpath)
            for rec in got[seen:]:
                results[rec.get("id")] = rec
                remaining = [c for c in remaining if c["id"] != rec.get("id")]
                last, allowance = time.monotonic(), timeout_s
            fresh, seen = len(got) > seen, max(seen, len(got))
            if done:
                break
            if not remaining:
                break  # it prints its table and exits (waited for below)
            if deadline is not None and fresh and time.monotonic() >= deadline:
                stop_reason = "budget"  # between two cases: the next one is not started
                break
            cut = allowance if deadline is None else min(allowance, max(10.0, deadline + grace_s - last))
            if time.monotonic() - last > cut:
                stop_reason = "timeout"
                break
            time.sleep(poll_s)
        if stop_reason is not None:
            _kill_group(p)
        finish(p, threads, 30)
        # a last look: the child may have reported cases just before it ended
        for rec in read_cases(jpath)[seen:]:
            results[rec.get("id")] = rec
            remaining = [c for c in remaining if c["id"] != rec.get("id")]
        tail = "".join(err)[-2000:]
        events.append({"attempt": attempt, "wall_s": time.monotonic() - t0, "rc": p.returncode, "stop": stop_reason,
                       "stderr_tail": tail, "stdout": "".join(out)})
        if not remaining:
            break
        if stop_reason == "budget":
            continue  # the loop head skips the rest
        barren = barren + 1 if seen == 0 and stop_reason is None else 0
        if barren >= 2:  # it dies at start (an import, a library): the rest would too
            for c in remaining:
                results[c["id"]] = {"status": "error", "reason": f"the script died before its first case twice "
                                    f"(exit status {p.returncode})", "stderr_tail": tail}
            break
        head = remaining.pop(0)
        if stop_reason == "timeout":
            results[head["id"]] = {"status": "timeout", "reason": f"no result within {cut:.0f} s"}
        else:
            why = f"process ended (exit status {p.returncode}) before reporting this case"
            results[head["id"]] = {"status": "error", "reason": why, "stderr_tail": tail}
            if p.returncode == 0:  # a clean exit that left cases out: do not loop on them
                for c in remaining:
                    results[c["id"]] = {"status": "error", "reason": "not reported by the script"}
                remaining = []
    return results, events
