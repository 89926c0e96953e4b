"""One capsule, many threads: exactly one of them takes it; and a close()
racing an export lets go of no memory the export uses.

Threads released together by a barrier all import the same capsule, round
after round, at a 1 µs switch interval: through a producer's __dlpack__ (the
ctypes module's in-place path), as a capsule (the foreign calls, the Cython
module's C), and through to_managed. Exactly one thread may own the tensor,
the others must be told the capsule is consumed, and the producer's deleter
must run exactly once per tensor; before taking a capsule was atomic, two
threads could both own it (a double deleter call, then memory corruption).
Then one thread closes a Tensor while another exports it: the export must
either fail or keep the memory's owner alive until its consumer is done
(the ctypes module used to read the lease after checking it, and let the
owner go).

It needs the standard library and the module under test only (the producer
is ctypes), so that it runs on debug and free-threaded builds without NumPy:
under pytest, or as a script (`python tests/python/test_thread_stress.py`,
which builds dlpack_cython where Cython is installed, or takes
DLGEN_CYTHON_DIR). DLGEN_STRESS_ROUNDS sets the rounds (10^4 in CI).
"""
import ctypes
import importlib
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
import threading
import weakref

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GENERATED = os.environ.get("DLGEN_PYTHON_DIR", os.path.join(ROOT, "generated", "python"))
ROUNDS = int(os.environ.get("DLGEN_STRESS_ROUNDS", "10000"))
THREADS = (2, 8)
ENTRIES = ("producer", "capsule", "to_managed")
FREE_THREADED = bool(sysconfig.get_config_var("Py_GIL_DISABLED"))

_new_capsule = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(
    ("PyCapsule_New", ctypes.pythonapi))


class Lends:
    """A producer whose __dlpack__ returns the one capsule it holds."""

    __slots__ = ("capsule",)

    def __dlpack__(self, **_):
        return self.capsule


class Counted:
    """A versioned managed tensor of four doubles, made with the ctypes
    module's structs, whose deleter counts its calls (it frees nothing, so a
    second call is counted, not a crash)."""

    def __init__(self):
        ct = importlib.import_module("dlpack_ctypes")
        self.calls = []  # list.append: atomic on every build
        self._deleter = dict(ct.DLManagedTensorVersioned._fields_)["deleter"](self._count)
        self._data = (ctypes.c_double * 4)(1, 2, 3, 4)
        self._dims = (ctypes.c_int64 * 2)(4, 1)
        m = self.managed = ct.DLManagedTensorVersioned()
        m.version.major, m.version.minor = ct.DLPACK_MAJOR_VERSION, ct.DLPACK_MINOR_VERSION
        m.deleter = self._deleter
        t = m.dl_tensor
        t.data = ctypes.addressof(self._data)
        t.device.device_type = ct.DLDeviceType.kDLCPU
        t.ndim = 1
        t.dtype.code, t.dtype.bits, t.dtype.lanes = ct.DLDataTypeCode.kDLFloat, 64, 1
        pointer = ctypes.POINTER(ctypes.c_int64)
        t.shape = ctypes.cast(self._dims, pointer)
        t.strides = ctypes.cast(ctypes.addressof(self._dims) + 8, pointer)
        self.address = ctypes.addressof(m)

    def _count(self, address):
        self.calls.append(address)

    def capsule(self):
        """A fresh capsule of the tensor, with no destructor: a tensor
        nobody takes is never deleted, and counts as a failure too."""
        return _new_capsule(self.address, b"dltensor_versioned", None)


def _consume(dl, entry, lender, capsule):
    """Takes the tensor through entry and gives it back: True if this
    thread owned it, False if it was told the capsule was consumed."""
    try:
        if entry == "producer":
            t = dl.from_dlpack(lender)
        elif entry == "capsule":
            t = dl.from_dlpack(capsule)
        else:
            address, versioned = dl.to_managed(capsule)
            t = dl.from_managed(address, versioned=versioned)
    except ValueError as e:
        if "consumed" not in str(e):
            raise
        return False
    if t.shape != (4,):
        raise AssertionError(f"a tensor of shape {t.shape}")
    t.close()
    return True


def stress(dl, threads, rounds, entries=ENTRIES):
    """Runs rounds rounds of threads threads taking one capsule; returns
    the failures, as text (none: every tensor had one owner and one
    deleter call)."""
    tensor = Counted()
    lender = Lends()
    owners = []
    errors = []
    state = {"round": 0}
    start, end = threading.Barrier(threads + 1), threading.Barrier(threads + 1)

    def work():
        try:
            for _ in range(rounds):
                start.wait()
                try:
                    if _consume(dl, state["entry"], lender, lender.capsule):
                        owners.append(state["round"])
                except BaseException as e:  # counted, never lost with the thread
                    errors.append(f"round {state['round']}: {type(e).__name__}: {e}")
                end.wait()
        except threading.BrokenBarrierError:
            pass  # the main thread stopped the run

    workers = [threading.Thread(target=work) for _ in range(threads)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    failures = []
    try:
        for w in workers:
            w.start()
        for r in range(rounds):
            state["round"], state["entry"] = r, entries[r % len(entries)]
            lender.capsule = tensor.capsule()
            n_owners, n_calls = len(owners), len(tensor.calls)
            start.wait()
            end.wait()
            owned, calls = len(owners) - n_owners, len(tensor.calls) - n_calls
            if owned != 1 or calls != 1:
                failures.append(f"round {r} ({state['entry']}): {owned} owners, {calls} deleter calls")
                if len(failures) >= 5:
                    start.abort()
                    end.abort()
                    break
    finally:
        sys.setswitchinterval(interval)
        for w in workers:
            w.join()
    return failures + errors[:5]


def _check(module, threads):
    dl = importlib.import_module(module)
    failures = stress(dl, threads, ROUNDS)
    assert not failures, f"{module}, {threads} threads, {ROUNDS} rounds:\n" + "\n".join(failures)


class Owner:
    """Memory a framework owns: four doubles."""

    def __init__(self):
        self.memory = (ctypes.c_double * 4)(1, 2, 3, 4)


def close_racing_export(dl, rounds):
    """Each round one thread closes a Tensor over an owner's memory while
    another exports it: the export either fails (closed) or keeps the owner
    alive until its consumer is done. Returns the failures, as text."""
    version = (dl.DLPACK_MAJOR_VERSION, dl.DLPACK_MINOR_VERSION)
    state = {}
    failures = []
    start, end = threading.Barrier(3), threading.Barrier(3)

    def export():
        try:
            for _ in range(rounds):
                start.wait()
                try:
                    state["capsule"] = state["tensor"].__dlpack__(max_version=version)
                except ValueError as e:
                    if "closed" not in str(e):
                        failures.append(f"export: {e}")
                end.wait()
        except threading.BrokenBarrierError:
            pass  # the main thread stopped the run

    def close():
        try:
            for _ in range(rounds):
                start.wait()
                state["tensor"].close()
                end.wait()
        except threading.BrokenBarrierError:
            pass

    workers = [threading.Thread(target=export), threading.Thread(target=close)]
    interval = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)
    try:
        for w in workers:
            w.start()
        for r in range(rounds):
            owner = Owner()
            state["tensor"] = dl.from_pointer(ctypes.addressof(owner.memory), (4,), "float64", owner=owner)
            alive = weakref.ref(owner)
            del owner
            start.wait()
            end.wait()
            capsule = state.pop("capsule", None)
            if capsule is not None:
                if alive() is None:
                    failures.append(f"round {r}: the owner was let go while an export of it lived")
                t = dl.from_dlpack(capsule)
                t.close()
            if len(failures) >= 5:
                start.abort()
                end.abort()
                break
    except threading.BrokenBarrierError:
        pass
    finally:
        sys.setswitchinterval(interval)
        for w in workers:
            w.join()
    return failures


def _check_close(module):
    dl = importlib.import_module(module)
    failures = close_racing_export(dl, ROUNDS)
    assert not failures, f"{module}, {ROUNDS} rounds:\n" + "\n".join(failures)


# --- under pytest ---------------------------------------------------------------

try:
    import pytest
except ImportError:  # a bare interpreter: run as a script (below)
    pytest = None

if pytest is not None:
    import conftest  # noqa: F401  (run as a script, this puts tests/harness.py on sys.path)
    from harness import MODULES

    @pytest.mark.parametrize("threads", THREADS)
    @pytest.mark.parametrize("module", MODULES)
    def test_one_capsule_has_one_owner(module, threads):
        _check(module, threads)

    @pytest.mark.parametrize("module", MODULES)
    def test_a_close_racing_an_export_keeps_the_memory(module):
        _check_close(module)

    @pytest.mark.parametrize("module", MODULES)
    def test_the_gil_stays_off_on_a_free_threaded_build(module):
        if not FREE_THREADED:
            pytest.skip("not a free-threaded build")
        # In a fresh interpreter: any extension another test imported without
        # declaring itself free-threading safe turns the GIL on process-wide.
        path = importlib.import_module(module).__file__
        env = {k: v for k, v in os.environ.items() if k != "PYTHON_GIL"}
        env["PYTHONPATH"] = os.path.dirname(path)
        code = f"import sys, {module}; sys.exit(1 if sys._is_gil_enabled() else 0)"
        r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                           check=False)
        assert r.returncode == 0, f"importing {module} turned the GIL on:\n{r.stderr}"


# --- as a script ------------------------------------------------------------------

def _build_cython():
    """dlpack_cython built in a scratch copy of the generated directory, or
    None where Cython is not installed."""
    try:
        importlib.import_module("Cython")
    except ImportError:
        return None
    build = tempfile.mkdtemp(prefix="dlgen-stress-")
    shutil.copytree(GENERATED, build, dirs_exist_ok=True)
    r = subprocess.run([sys.executable, "-m", "Cython.Build.Cythonize", "-i", "-q", "dlpack_cython.pyx"],
                       cwd=build, capture_output=True, text=True, check=False)
    if r.returncode != 0:
        raise RuntimeError("cythonize failed:\n" + r.stdout + r.stderr)
    return build


def main():
    sys.path.insert(0, GENERATED)
    modules = ["dlpack_ctypes"]
    cython_dir = os.environ.get("DLGEN_CYTHON_DIR") or _build_cython()
    if cython_dir:
        sys.path.insert(0, cython_dir)
        sys.path.insert(0, GENERATED)
        modules.append("dlpack_cython")
    elif os.environ.get("DLGEN_REQUIRE_TOOLS") == "1":
        print("FAIL dlpack_cython: no Cython in this interpreter (DLGEN_REQUIRE_TOOLS=1)")
        return 1
    else:
        print("dlpack_cython: not built (no Cython in this interpreter)")
    failed = False
    for module in modules:
        for threads in THREADS:
            try:
                _check(module, threads)
                print(f"{module}, {threads} threads, {ROUNDS} rounds: one owner, one deleter call each")
            except AssertionError as e:
                failed = True
                print(f"FAIL {e}")
        try:
            _check_close(module)
            print(f"{module}, {ROUNDS} rounds of a close racing an export: the memory stayed")
        except AssertionError as e:
            failed = True
            print(f"FAIL {e}")
    if FREE_THREADED:
        if sys._is_gil_enabled():
            failed = True
            print(f"FAIL the GIL is on after importing {', '.join(modules)}")
        else:
            print("the GIL stayed off")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
