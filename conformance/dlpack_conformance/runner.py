"""Runs cases out of the kit's process: one worker process per library runs
the cases one at a time and reports each on a pipe of its own; when the library crashes the
worker (a signal, an abort) or hangs, that case is reported as a crash with
the signal and the end of what the process printed, and a fresh worker goes
on with the next case (each case from then on in a child forked from it
after the import). One worker serves every case until it dies, so a run
costs one import of the library plus one for the first crash; cases in one worker
share the library's state (the kit keeps every tensor it made alive, so a
late deleter call reaches live memory), but not the process state a case
may change, which the worker restores after each (_ProcessState), so a
case's verdict is the one it gets run alone."""

import contextlib
import fnmatch
import gc
import json
import os
import select
import signal
import subprocess
import sys
import time
import traceback

from . import cases as catalogue
from .adapters import AdapterError, adapter_for
from .reference import VERSION
from .spec import REQUIREMENTS, Refused, Skip, Violation, basis

# pass: the library met every check; fail: it broke a `must`; warn: it broke
# a `should` (never fails a run); crash: it killed or hung the worker;
# error: the kit could not judge the case (a check of the kit's could not
# run: the kit's or the adapter's fault, never the library's; counted
# apart); skip: not judged (what the library cannot make, declared or not);
# xfail: a failure the xfail file expects.
VERDICTS = ("pass", "fail", "crash", "error", "skip", "xfail", "warn")
JUDGED = ("pass", "fail", "crash", "warn", "xfail")
SIDES = ("producer", "consumer")
# How long a case may run before it is a hang (DLPACK_CONFORMANCE_TIMEOUT
# seconds in the environment, for a slow library or a test).
CASE_TIMEOUT = float(os.environ.get("DLPACK_CONFORMANCE_TIMEOUT", "60"))


class CannotRun(Exception):
    """The kit cannot run against a library (exit 2)."""


def result(library, case, verdict, message, spec=None, *, declared=False, trace=None):
    """One case's result, as --json writes it."""
    strength, source, text = REQUIREMENTS[spec] if spec else (None, None, None)
    return {
        "library": library,
        "case": case.id,
        "side": case.side,
        "verdict": verdict,
        "message": message,
        "about": case.about,
        "spec": spec,
        "strength": strength,
        "basis": basis(spec) if spec else None,
        "source": source,
        "requirement": text,
        "reproducer": None,
        "declared": declared,
        "malformed": bool(getattr(case, "malformed", False)),
        "traceback": trace,
    }


def kit_error(library, case, error, where):
    """The kit could not judge the case: a check of its own raised. The
    traceback says where (the kit, the adapter's spelling, or the library
    called from a check)."""
    frames = traceback.extract_tb(error.__traceback__)
    # The case's script is "<string>": keep it and what it called.
    start = next((i for i, f in enumerate(frames) if f.filename == "<string>"), 0)
    trace = "".join(traceback.format_list(frames[start:]) + traceback.format_exception_only(type(error), error))
    place = _where(frames[-1], case) if frames else ""
    return result(
        library,
        case,
        "error",
        f"{where}: {type(error).__name__}: {_short(error)}{place}",
        trace=trace.rstrip(),
    )


def _where(frame, case):
    """Where an error was raised, in words: the kit's own code, the case's
    script (the adapter's spelling, or a C function of the library it
    called), or a Python file of the library's."""
    name = os.path.basename(frame.filename)
    kit = os.path.dirname(os.path.abspath(__file__))
    if frame.filename == "<string>":
        lines = case.body_text().splitlines()
        line = lines[frame.lineno - 1].strip() if 0 < frame.lineno <= len(lines) else ""
        return f" (raised at the case's `{line}`, or in what it called of the library)"
    if os.path.dirname(os.path.abspath(frame.filename)) == kit:
        return f" (raised in the kit, {name}:{frame.lineno})"
    return f" (raised in the library's code, {name}:{frame.lineno})"


# ---- in the worker ----------------------------------------------------------


def run_case(adapter, case, namespace_base):
    """Runs one case in this process and returns its result."""
    ns = dict(namespace_base)
    try:
        exec("\n".join(case.setup), ns)  # noqa: S102 - a case is a script
    except Exception as e:  # noqa: BLE001 - the library could not make the input
        return result(
            adapter.name,
            case,
            "skip",
            f"{adapter.name} could not make the input: {type(e).__name__}: {_short(e)}",
        )
    try:
        exec(case.body_text(), ns)  # noqa: S102
    except Refused as why:
        return result(adapter.name, case, "pass", str(why))
    except Skip as why:
        return result(adapter.name, case, "skip", str(why))
    except Violation as v:
        strength = REQUIREMENTS.get(v.spec, ("must",))[0]
        spec = v.spec if v.spec in REQUIREMENTS else None
        return result(adapter.name, case, "fail" if strength == "must" else "warn", str(v), spec)
    except Exception as e:  # noqa: BLE001 - judged by where it was raised
        if _raised_by_library(e):
            return _library_raised(adapter, case, ns, e)
        return kit_error(adapter.name, case, e, "the kit could not judge this case: a check could not run")
    return result(adapter.name, case, "pass", "")


def _raised_by_library(error):
    """Whether error was raised in the library's code: its innermost frame is
    a file of the library's (a .py, a Cython .pyx), or the case's script
    itself, where what raised is a C function of the library the script
    called (a builtin from_dlpack, tolist), which leaves no frame of its own.
    In the script a NameError or AttributeError is the adapter's spelling (a
    name the library lacks), and an error in the kit's own files is the
    kit's."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return False
    if frames[-1].filename == "<string>":
        return not isinstance(error, (NameError, AttributeError))
    if frames[-1].filename.startswith("<"):
        return False
    kit = os.path.dirname(os.path.abspath(__file__))
    return os.path.dirname(os.path.abspath(frames[-1].filename)) != kit


def _library_raised(adapter, case, ns, error):
    """A library's exception in a case's checks (after its call returned):
    judged as the case's rule judges a refusal, saying where it was raised."""
    from . import reference

    where = _where(traceback.extract_tb(error.__traceback__)[-1], case)
    said = f"after the call returned, the library raised {type(error).__name__}: {_short(error)}{where}"
    ns.pop("y", None)  # the imported array: the deleter rule is judged without it
    try:
        reference.refused(error, case.refusal, ns.get("producer") if case.side == "consumer" else None)
    except Refused as why:
        return result(adapter.name, case, "pass", f"{said}; the case allows it: {why}")
    except Skip as why:
        return result(adapter.name, case, "skip", f"{said}; {why}")
    except Violation as v:
        strength = REQUIREMENTS.get(v.spec, ("must",))[0]
        spec = v.spec if v.spec in REQUIREMENTS else None
        return result(adapter.name, case, "fail" if strength == "must" else "warn", f"{said}; {v}", spec)
    return kit_error(adapter.name, case, error, "the kit could not judge this case")


# The case whose input a side's probe makes: the plainest of each side.
_PROBE_CASES = {
    "producer": "producer/layout/contiguous/max_version=none",
    "consumer": "consumer/legacy/contiguous",
}
# The plain inputs a side must take (export-basic, consumer-basic): a side
# that refuses every one of them has the names but not the side.
_PLAIN_CASES = {
    "producer": (
        "producer/layout/contiguous/max_version=none",
        f"producer/layout/contiguous/max_version={VERSION[0]}.{VERSION[1]}",
    ),
    "consumer": ("consumer/versioned/contiguous", "consumer/legacy/contiguous"),
}


def probe(adapter, side, namespace_base, by_id):
    """Whether the library has this side: None when it has (or the kit
    cannot tell), else what is missing. Evaluates the adapter's spelling of
    the export (or import) up to the function it calls, without calling
    it; a name the library lacks raises AttributeError or NameError right
    there. Where the names are there, runs the side's plain inputs: a side
    that refuses them all (a __dlpack__ that always raises) is missing too."""
    missing = _names_missing(adapter, side, namespace_base, by_id)
    if missing:
        return missing
    refusals = []
    for case_id in _PLAIN_CASES[side]:
        case = by_id.get(case_id)
        if case is None:
            continue
        refused = _refuses(case, namespace_base)
        if refused is None:
            return None
        refusals.append(refused)
    if not refusals:
        return None
    return "it refuses even the plainest input: " + "; ".join(dict.fromkeys(refusals))


def _refuses(case, namespace_base):
    """None when the case's library call returns, else what it raised."""
    ns = dict(namespace_base)
    try:
        exec("\n".join(case.setup), ns)  # noqa: S102 - the case's own setup
    except Exception:  # noqa: BLE001 - an input the library cannot make: the cases judge it
        return None
    call = case.body[0]
    try:
        exec(call, ns)  # noqa: S102 - the case's own call of the library
    except Exception as e:  # noqa: BLE001 - the refusal is the answer
        return f"`{call.partition(' = ')[2] or call}` raised {type(e).__name__}: {_short(e)}"
    return None


def _names_missing(adapter, side, namespace_base, by_id):
    import ast

    case = by_id.get(_PROBE_CASES[side])
    if case is None:
        return None
    ns = dict(namespace_base)
    for line in case.setup:
        try:
            exec(compile(line, "<probe>", "exec"), ns)  # noqa: S102 - the case's own setup
        except Exception as e:  # noqa: BLE001 - judged by _missing
            return _missing(e, line)
    spelled = adapter.export("x", {}) if side == "producer" else adapter.from_dlpack("producer")
    try:
        call = ast.parse(spelled, mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(call, ast.Call):
        return None
    function = ast.unparse(call.func)
    try:
        eval(compile(function, "<probe>", "eval"), ns)  # the adapter's own spelling
    except Exception as e:  # noqa: BLE001 - judged by _missing
        return _missing(e, function)
    return None


def _missing(error, spelled):
    """Why a side is missing when error is a name looked up in the
    adapter's spelling itself (not raised deeper, in the library)."""
    if not isinstance(error, (AttributeError, NameError)):
        return None
    frames = traceback.extract_tb(error.__traceback__)
    if not frames or frames[-1].filename != "<probe>":
        return None
    return f"`{spelled}` raised {type(error).__name__}: {_short(error)}"


def library_version(adapter):
    """The library's version: its __version__, or its distribution's."""
    top = adapter.module.split(".")[0]
    version = getattr(sys.modules.get(top), "__version__", None)
    if version is None:
        try:
            import importlib.metadata

            version = importlib.metadata.version(top)
        except Exception:  # noqa: BLE001 - no distribution of that name
            return None
    if isinstance(version, (tuple, list)):  # (1, 7, 4): "1.7.4"
        return ".".join(map(str, version))
    return str(version)


def _short(e, limit=300):
    text = str(e).strip().splitlines()
    text = text[0] if text else ""
    return text if len(text) <= limit else text[:limit] + "..."


def _die_with_parent():
    """On Linux, the worker is killed when the parent dies (a CI timeout kills
    the parent); elsewhere it ends when its request channel closes."""
    if sys.platform.startswith("linux"):
        import ctypes

        with contextlib.suppress(OSError, AttributeError):
            ctypes.CDLL(None).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG


# The process that answers the parent: the worker, or in an isolated run the
# child it forked for the case. A process the library forks is neither: it
# never writes a result (it would answer a case twice), it exits.
_REPORTER = None


def _report(out, r):
    if os.getpid() != _REPORTER:
        os._exit(0)
    out.write(json.dumps(r) + "\n")


class _ProcessState:
    """What a case may change in the worker's process and the next case must
    not see: the working directory, sys.stdout/stderr and the file
    descriptors 1 and 2, the standard library's entries in sys.modules, the
    Python signal handlers, the garbage collector's state. Recorded after the
    library's import, restored after every case, so that each case starts
    where the first one did."""

    def __init__(self):
        self.cwd = os.getcwd()
        self.streams = (sys.stdin, sys.stdout, sys.stderr)
        self.fds = {fd: os.dup(fd) for fd in (1, 2)}
        stdlib = getattr(sys, "stdlib_module_names", ())
        self.modules = {n: m for n, m in sys.modules.items() if n.partition(".")[0] in (*stdlib, *_KIT_MODULES)}
        self.signals = {}
        for s in signal.valid_signals():
            with contextlib.suppress(OSError, ValueError, RuntimeError):
                handler = signal.getsignal(s)
                if handler is not None:
                    self.signals[s] = handler
        self.gc = (gc.isenabled(), gc.get_threshold())

    def restore(self):
        with contextlib.suppress(OSError):
            if os.getcwd() != self.cwd:
                os.chdir(self.cwd)
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
        sys.stdin, sys.stdout, sys.stderr = self.streams
        for fd, saved in self.fds.items():
            with contextlib.suppress(OSError):
                os.dup2(saved, fd)
        for name, module in self.modules.items():
            if sys.modules.get(name) is not module:
                sys.modules[name] = module
        for s, handler in self.signals.items():
            with contextlib.suppress(OSError, ValueError, RuntimeError, TypeError):
                if signal.getsignal(s) is not handler:
                    signal.signal(s, handler)
        enabled, threshold = self.gc
        if enabled and not gc.isenabled():
            gc.enable()
        if gc.get_threshold() != threshold:
            gc.set_threshold(*threshold)


_KIT_MODULES = ("dlpack_conformance",)


def worker(library, result_fd, request_fd):
    """The worker's loop: "sequence-number case-id" lines on request_fd, one
    JSON result a line on result_fd, each tagged with the number and id it
    answers (the library's stdin is /dev/null: a library that reads stdin
    reads nothing of the kit's). With DLPACK_CONFORMANCE_ISOLATE=1 in its environment each case
    runs in a child forked from the worker after the library's import (case
    by case: no case sees what another did)."""
    global _REPORTER
    _die_with_parent()
    _REPORTER = os.getpid()
    isolate = os.environ.pop("DLPACK_CONFORMANCE_ISOLATE", "") == "1" and hasattr(os, "fork")
    adapter = adapter_for(library)
    out = os.fdopen(result_fd, "w", buffering=1)
    requests = os.fdopen(request_fd, "r")
    try:
        adapter.load()
        ns = {}
        exec("\n".join(adapter.header()), ns)  # noqa: S102
    except Exception as e:  # noqa: BLE001 - reported to the parent as cannot-run
        _report(out, {"cannot_run": f"{library}: {type(e).__name__}: {e}"})
        return
    state = _ProcessState()
    _report(out, {"ready": True, "version": library_version(adapter)})
    by_id = {c.id: c for c in catalogue.all_cases(adapter)}
    for line in requests:
        if line.startswith("probe:"):
            side = line.strip().partition(":")[2]
            _report(out, {"probe": side, "missing": probe(adapter, side, ns, by_id)})
            state.restore()
            continue
        seq, _, case_id = line.strip().partition(" ")
        case = by_id[case_id]
        start = time.monotonic()
        r = _run_forked(adapter, case, ns, request_fd) if isolate else _run_guarded(adapter, case, ns)
        r["seconds"] = round(time.monotonic() - start, 4)
        r["seq"] = int(seq)
        _report(out, r)
        state.restore()
    out.flush()
    # No interpreter shutdown: the library's objects may call the kit's
    # callbacks (deleters, capsule destructors) while modules are torn down.
    os._exit(0)


def _run_guarded(adapter, case, ns):
    try:
        return run_case(adapter, case, ns)
    except BaseException as e:  # noqa: BLE001 - the kit's own error, reported as such
        if os.getpid() != _REPORTER:
            os._exit(0)
        return kit_error(adapter.name, case, e, "the kit failed")


def _run_forked(adapter, case, ns, requests):
    """Runs the case in a child of the worker and returns its result, or a
    crash when the child died without one. The child's answer is one
    length-prefixed message and its end is its exit, waited for by its pid:
    a process the library forks and leaves running holds the pipe open, and
    a library that set SIGCHLD to SIG_IGN at import would have the child
    reaped before the kit could read its status (os.waitpid: ECHILD)."""
    global _REPORTER
    with contextlib.suppress(OSError, ValueError):
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)  # the kit's, not the library's, for its own child
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        os.close(requests)  # the worker's request channel is not the case's
        _REPORTER = os.getpid()
        r = _run_guarded(adapter, case, ns)
        message = json.dumps(r).encode()
        if os.getpid() == _REPORTER:
            with contextlib.suppress(OSError):
                _write_all(write, len(message).to_bytes(8, "little") + message)
        os._exit(0)
    os.close(write)
    got, status = _read_answer(read, pid, time.monotonic() + CASE_TIMEOUT)
    os.close(read)
    if got is not None:
        return got
    if status is None:
        # A child forked from a multithreaded library (JAX) may deadlock on a
        # lock another thread held at the fork: not the library's verdict.
        # The parent runs the case again in a process of its own.
        return {"forked_hang": True, "case": case.id}
    if os.WIFSIGNALED(status):
        why = _signal_name(os.WTERMSIG(status))
    else:
        why = f"the process exited with status {os.WEXITSTATUS(status)}"
    return crashed(adapter.name, case, f"{why} without an answer while running this case")


def _write_all(fd, data):
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view) :]


def _read_answer(fd, pid, deadline):
    """(the child's result or None, its wait status or None when it hung and
    was killed). Reads the length-prefixed message while watching the child
    by its pid; returns as soon as the message is whole or the child is gone."""
    data, status, eof = b"", None, False
    while True:
        wait = min(max(deadline - time.monotonic(), 0), 0.2)
        if not eof and select.select([fd], [], [], wait)[0]:
            chunk = os.read(fd, 1 << 16)
            data += chunk
            eof = not chunk
            if len(data) >= 8 and len(data) >= 8 + int.from_bytes(data[:8], "little"):
                break
            continue
        if eof:
            time.sleep(wait)
        status = _reap(pid, os.WNOHANG)
        if status is not None and (eof or not select.select([fd], [], [], 0)[0]):
            return None, status
        if time.monotonic() >= deadline:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
            _reap(pid, 0)
            return None, None
    status = _reap(pid, 0)
    size = int.from_bytes(data[:8], "little")
    try:
        return json.loads(data[8 : 8 + size]), status
    except ValueError:
        return None, status


def _reap(pid, options):
    """The child's wait status, None while it runs (WNOHANG); a status of
    0 when something else reaped it (ECHILD): its message decides."""
    try:
        got, status = os.waitpid(pid, options)
    except ChildProcessError:
        return 0
    return status if got == pid else None


def crashed(library, case, message):
    """The result of a case whose process died: a crash (crash-malformed on
    a malformed tensor), or a skip where the case's tensor names memory the
    kit does not have, which a consumer may read."""
    if getattr(case, "unbacked", ""):
        return result(library, case, "skip", f"{message}; {case.unbacked}")
    spec = "crash-malformed" if getattr(case, "malformed", False) else "crash"
    return result(library, case, "crash", message, spec)


def _signal_name(number):
    try:
        return f"the process died of {signal.Signals(number).name}"
    except ValueError:
        return f"the process died of signal {number}"


# ---- in the parent ----------------------------------------------------------


class Worker:
    def __init__(self, library, env=None, isolate=False):
        self.library = library
        self.seq = 0
        self.lost = None  # why the last case got no answer of its own
        read, write = os.pipe()
        requests, self.requests = os.pipe()
        self.stderr_path = os.path.join(_tmpdir(), f"worker-{os.getpid()}-{time.monotonic_ns()}.log")
        self.stderr = open(self.stderr_path, "w+b")  # noqa: SIM115 - the worker's output, until close()
        env = dict(os.environ if env is None else env)
        here = _kit_path()
        if here:
            env["PYTHONPATH"] = here + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
        env.setdefault("PYTHONUNBUFFERED", "1")
        env.pop("DLPACK_CONFORMANCE_ISOLATE", None)
        if isolate:
            env["DLPACK_CONFORMANCE_ISOLATE"] = "1"
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dlpack_conformance",
                "--worker",
                library,
                "--result-fd",
                str(write),
                "--request-fd",
                str(requests),
            ],
            stdin=subprocess.DEVNULL,
            stdout=self.stderr,
            stderr=self.stderr,
            pass_fds=(write, requests),
            env=env,
        )
        os.close(write)
        os.close(requests)
        self.requests = os.fdopen(self.requests, "w")
        self.results = os.fdopen(read, "r")
        first = self._read(120.0)
        if first is None or "cannot_run" in first:
            why = first["cannot_run"] if first else f"the worker died at start: {self.tail()}"
            self.close()
            raise CannotRun(why)
        self.version = first.get("version")

    def _read(self, timeout):
        # In slices: a process the library forked may hold the pipe open
        # after the worker died, so the worker's exit is watched too.
        deadline = time.monotonic() + timeout
        while True:
            left = deadline - time.monotonic()
            ready, _, _ = select.select([self.results], [], [], min(max(left, 0), 0.5))
            if ready:
                break
            if left <= 0 or self.proc.poll() is not None:
                return None
        line = self.results.readline()
        try:
            return json.loads(line) if line else None
        except json.JSONDecodeError:
            return None  # the worker died while writing

    def probe(self, side):
        """What the library lacks to be a side (None: nothing), or ... when
        the worker died answering."""
        try:
            self.requests.write(f"probe:{side}\n")
            self.requests.flush()
        except BrokenPipeError:
            return ...
        answer = self._read(CASE_TIMEOUT)
        return ... if answer is None else answer.get("missing")

    def run(self, case):
        """The case's result, or None when the worker died or hung, or
        answered something else than this case (self.lost says what): each
        request carries a sequence number the answer must repeat, with the
        case's id; a stale answer to an earlier request is dropped."""
        self.seq += 1
        self.lost = None
        try:
            self.requests.write(f"{self.seq} {case.id}\n")
            self.requests.flush()
        except BrokenPipeError:
            return None
        # A forking worker answers a hung child's case itself, after
        # CASE_TIMEOUT: the parent waits a little longer.
        deadline = time.monotonic() + CASE_TIMEOUT + 10
        while True:
            r = self._read(max(deadline - time.monotonic(), 0))
            if r is None:
                return None
            seq = r.pop("seq", None)
            if isinstance(seq, int) and seq < self.seq:
                continue  # an answer to a request already answered
            if seq != self.seq or r.get("case") != case.id:
                self.lost = (
                    f"the worker answered request {seq} ({r.get('case')}) where this case was "
                    f"request {self.seq}: its process state is not the kit's"
                )
                self.proc.kill()
                return None
            return r

    def death(self):
        """Why the worker is gone: its signal or exit code."""
        try:
            code = self.proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
            return f"hung for more than {CASE_TIMEOUT:.0f} s (killed)"
        if code < 0:
            try:
                return f"the process died of {signal.Signals(-code).name}"
            except ValueError:
                return f"the process died of signal {-code}"
        return f"the process exited with status {code}"

    def tail(self, lines=6):
        self.stderr.flush()
        with open(self.stderr_path, "rb") as f:
            text = f.read().decode(errors="replace").strip().splitlines()
        return " | ".join(text[-lines:])

    def close(self):
        with contextlib.suppress(OSError):  # a worker already gone
            self.requests.close()
        try:
            self.proc.wait(timeout=10)
        except (subprocess.TimeoutExpired, OSError):
            self.proc.kill()
        self.results.close()
        self.stderr.close()
        os.unlink(self.stderr_path)


def _kit_path():
    """The directory holding the kit's package, for the worker's PYTHONPATH;
    None where the kit is installed (site-packages, which the worker's
    Python reads anyway: put first on PYTHONPATH, it would shadow the
    standard library)."""
    import sysconfig

    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    installed = {sysconfig.get_paths()[k] for k in ("purelib", "platlib")}
    return None if any(os.path.realpath(p) == os.path.realpath(here) for p in installed) else here


def _tmpdir():
    import tempfile

    return tempfile.gettempdir()


def select_cases(library, patterns=()):
    try:
        adapter = adapter_for(library)
    except AdapterError as e:
        raise CannotRun(str(e)) from None
    chosen = catalogue.all_cases(adapter)
    if patterns:
        chosen = [c for c in chosen if any(_matches(c.id, p) for p in patterns)]
    return adapter, chosen


def _matches(case_id, pattern):
    if any(ch in pattern for ch in "*?["):
        return fnmatch.fnmatchcase(case_id, pattern)
    return pattern in case_id


class Session:
    """Runs cases of one library in a worker, starting a fresh worker after
    a crash."""

    def __init__(self, library, isolate=False):
        self.library = library
        self.adapter = adapter_for(library)
        self.worker = None
        self.version = None
        self.missing = {}  # side: None (present) or what the library lacks
        self.isolate = isolate
        self.crashed = False

    def declared_skip(self, case):
        """Why the adapter says the library cannot do the case, or None."""
        name, adapter = self.adapter.name, self.adapter
        sides = getattr(adapter, "sides", SIDES)
        if case.side not in sides:
            return f"{name} is {sides[0]}-only: it has no {case.side} (its adapter says so)"
        if case.needs & adapter.lacks:
            return f"{name} lacks {', '.join(sorted(case.needs))} (its adapter says so)"
        ndims = getattr(adapter, "ndims", None)
        judged_refusal = case.side == "producer" or case.refusal in (
            "consumer-basic",
            "consumer-refused-valid",
        )
        wanted = getattr(case, "ndims", frozenset())
        if ndims is not None and judged_refusal and not case.malformed and wanted - set(ndims):
            made = ", ".join(f"{n}-d" for n in sorted(ndims))
            return (
                f"{name} makes {made} arrays only; this case needs "
                f"{', '.join(f'{n}-d' for n in sorted(wanted))} (its adapter says so)"
            )
        return None

    def side_missing(self, side):
        """What the library lacks to be this side, or None; asked once."""
        if side not in self.missing:
            if self.worker is None:
                self._start()
            got = self.worker.probe(side)
            if got is ...:  # it died answering: it has the side, crashing
                self.worker.close()
                self.worker = None
                self.crashed = True
                got = None
            self.missing[side] = got
        return self.missing[side]

    def _start(self):
        # After a crash, the fresh worker runs each case in a child forked
        # after the import: a library that crashes on many cases costs one
        # import more, not one per crash (the verdicts are the same: CI
        # compares whole and forked runs).
        self.worker = Worker(self.library, isolate=self.isolate or self.crashed)
        self.version = self.worker.version

    def run(self, case):
        declared = self.declared_skip(case)
        missing = None if declared else self.side_missing(case.side)
        if declared:
            r = result(self.adapter.name, case, "skip", declared, declared=True)
        elif missing:
            r = result(
                self.adapter.name,
                case,
                "fail",
                f"{self.adapter.name} has no {case.side}: {missing}. If it has none by design, say so in "
                f"its adapter: sides = ({SIDES[case.side == 'producer']!r},)",
                f"{case.side}-exists",
            )
        else:
            if self.worker is None:
                self._start()
            r = self.worker.run(case)
            unforked = r is not None and r.get("forked_hang")
            if unforked:
                r = self._unforked(case)
            if r is not None and unforked:
                self.worker.close()  # the next case starts a worker as before
                self.worker = None
            if r is None:
                why = self.worker.lost or self.worker.death()
                r = crashed(
                    self.adapter.name,
                    case,
                    f"{why} while running this case; its last words: {self.worker.tail() or '(none)'}",
                )
                self.worker.close()
                self.worker = None
                self.crashed = True
        r["reproducer"] = case.script(self.adapter)
        return r

    def _unforked(self, case):
        """The case's result run in a fresh worker that does not fork (after
        a forked child hung), or None when that one died or hung too."""
        self.worker.close()
        self.worker = Worker(self.library, isolate=False)
        return self.worker.run(case)

    def close(self):
        if self.worker is not None:
            self.worker.close()
            self.worker = None


def isolated_by_environment():
    """Whether DLPACK_CONFORMANCE_ISOLATE=1 asks the command for isolated
    runs (run_library's isolate), as CI's case-by-case comparison does."""
    return os.environ.get("DLPACK_CONFORMANCE_ISOLATE") == "1"


def whole_sides(library, results):
    """The sides of library every case of which is in results."""
    _, every = select_cases(library)
    ran = {r["case"] for r in results}
    return tuple(side for side in SIDES if all(c.id in ran for c in every if c.side == side))


def run_library(library, patterns=(), on_result=None, isolate=False):
    """Every selected case against library, isolated; returns the results.
    With isolate, each case runs in a process of its own forked after the
    library's import, as if it were run alone (slower; Linux and macOS)."""
    _, chosen = select_cases(library, patterns)
    session = Session(library, isolate=isolate)
    results = []
    try:
        for case in chosen:
            r = session.run(case)
            r["version"] = session.version
            results.append(r)
            if on_result:
                on_result(r)
    finally:
        session.close()
    for r in results:  # the version is known once a worker has started
        r["version"] = session.version
    return results


# ---- xfail files ------------------------------------------------------------


def read_xfail(path):
    """An xfail file: one case pattern a line, optionally `library: pattern`,
    `#` comments."""
    entries = []
    with open(path) as f:
        for number, line in enumerate(f, 1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            library, sep, pattern = line.partition(": ")
            if not sep:
                library, pattern = "*", line
            entries.append((library.strip(), pattern.strip(), f"{path}:{number}"))
    return entries


def apply_xfail(results, entries, argument=None):
    """Marks the results the xfail entries name; a `library:` part matches
    the library's name or the LIBRARY argument as typed."""
    for r in results:
        for library, pattern, where in entries:
            names = (r["library"], argument or r["library"])
            if any(fnmatch.fnmatchcase(n, library) for n in names) and _matches(r["case"], pattern):
                if r["verdict"] in ("fail", "crash", "error"):
                    r["message"] = f"expected ({where}): {r['message']}"
                    r["verdict"] = "xfail"
                elif r["verdict"] == "pass":
                    r.update(result(r["library"], _Named(r), "fail", "", "xfail-stale"), **_kept(r))
                    r["message"] = f"passed, but {where} expects it to fail: remove that line"
                break
    return results


class _Named:
    """A result's case, as result() reads it."""

    def __init__(self, r):
        self.id, self.side, self.about = r["case"], r["side"], r["about"]
        self.malformed = r.get("malformed", False)


def _kept(r):
    return {k: r[k] for k in ("reproducer", "seconds", "version") if k in r}


# ---- the verdict of a run ---------------------------------------------------


def fails_run(r, malformed_crashes="fail"):
    """Whether this result fails the run: a fail, or a crash (a crash on a
    malformed tensor only when malformed_crashes is "fail")."""
    if r["verdict"] == "fail":
        return True
    if r["verdict"] == "crash":
        return malformed_crashes == "fail" or r["spec"] != "crash-malformed"
    return False


def summarize(results, malformed_crashes="fail", whole_sides=SIDES):
    """One library's run in numbers, and why it fails (problems, empty when
    it passes): {library, version, cases, counts, sides: {side: {cases,
    judged, skipped, declared, undeclared}}, errors, problems}. The rule on a
    side whose cases were mostly not judged applies to whole_sides only, the
    sides every case of which ran: of a --case selection, the verdicts of the
    cases run decide."""
    from collections import Counter

    library = results[0]["library"] if results else None
    counts = Counter(r["verdict"] for r in results)
    sides = {}
    for side in SIDES:
        mine = [r for r in results if r["side"] == side]
        skipped = [r for r in mine if r["verdict"] == "skip"]
        sides[side] = {
            "cases": len(mine),
            "judged": sum(r["verdict"] in JUDGED and r["spec"] != f"{side}-exists" for r in mine),
            "skipped": len(skipped),
            "declared": sum(bool(r.get("declared")) for r in skipped),
            # could not make the input, without the adapter saying so
            "undeclared": sum(not r.get("declared") and _unmade(r) for r in skipped),
            "missing": next((r["message"] for r in mine if r["spec"] == f"{side}-exists"), None),
        }
    problems = []
    for side, n in sides.items():
        if n["missing"]:
            problems.append(n["missing"])
        elif n["cases"] and n["undeclared"] * 2 > n["cases"] and side in whole_sides:
            problems.append(
                f"most {side} cases were not judged: {n['undeclared']} of {n['cases']} skipped because the "
                "library could not make the input, and its adapter does not say it cannot (declare it: "
                "lacks, ndims, dtypes, sides)"
            )
    failing = [
        r for r in results if fails_run(r, malformed_crashes) and not (r["spec"] or "").endswith("-exists")
    ]
    if failing:
        by = Counter(r["verdict"] for r in failing)
        words = {"fail": ("failure", "failures"), "crash": ("crash", "crashes")}
        problems.append(" and ".join(f"{n} {words[v][n != 1]}" for v, n in sorted(by.items(), reverse=True)))
    version = next((r.get("version") for r in results if r.get("version")), None)
    return {
        "library": library,
        "version": version,
        "cases": len(results),
        "counts": {v: counts[v] for v in VERDICTS},
        "sides": sides,
        "errors": counts["error"],
        "problems": problems,
    }


def _unmade(r):
    return "could not make the input" in r["message"]


def exit_status(summaries):
    """0: every library passes; 1: one fails (a fail, a crash, a missing
    side, undeclared skips in the majority, a stale xfail line); 3: none
    fails but the kit could not judge some cases (errors: the kit's fault)."""
    if any(s["problems"] for s in summaries):
        return 1
    if any(s["errors"] for s in summaries):
        return 3
    return 0


def failed(results, malformed_crashes="fail"):
    return bool(summarize(results, malformed_crashes)["problems"])
