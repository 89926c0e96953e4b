"""dlgen's Python test harness, shared by every folder of Python tests in this
repository (tests/python: the generated modules; conformance/tests: the kit):
the paths, the Cython build of dlpack_cython, the fixtures (each generated
module, dlgen built from this checkout, a malformed producer) and the account
of skips every run ends with. Each folder's conftest.py plugs it in once
(plug_into), so one run over both folders builds and counts once; test
modules import what they use from it (`from harness import ROOT`)."""
import ctypes
import importlib
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GENERATED = os.environ.get("DLGEN_PYTHON_DIR", os.path.join(ROOT, "generated", "python"))


def _load(name, path):
    """The module at path, imported by its file alone: the kit's home folder
    itself is not put on sys.path, where its source package would hide the
    kits the tests generate."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


# The conformance matrix's script (conformance/matrix.py).
matrix = _load("matrix", os.path.join(ROOT, "conformance", "matrix.py"))
REQUIRED = os.environ.get("DLGEN_REQUIRE_TOOLS") == "1"


CIMPORT_CHECK = """# cython: language_level=3
from dlpack cimport (DLManagedTensorVersioned, DLManagedTensor, DLTensor, DLPackExchangeAPI,
                            DLPACK_MAJOR_VERSION, DLPACK_MINOR_VERSION, DLPACK_FLAG_BITMASK_READ_ONLY, kDLCPU, kDLBool)


def facts():
    cdef DLManagedTensorVersioned m
    m.version.major = DLPACK_MAJOR_VERSION
    return {
        "DLManagedTensorVersioned": sizeof(DLManagedTensorVersioned),
        "DLManagedTensor": sizeof(DLManagedTensor),
        "DLTensor": sizeof(DLTensor),
        "DLPackExchangeAPI": sizeof(DLPackExchangeAPI),
        "version": (m.version.major, DLPACK_MINOR_VERSION),
        "values": (DLPACK_FLAG_BITMASK_READ_ONLY, kDLCPU, kDLBool),
    }
"""


def cython_warnings(log):
    """The warnings in a cythonize log about Cython sources (.pyx, .pxd and
    the .pxi files dlpack_cython includes)."""
    return [line for line in log.splitlines()
            if "warning" in line.lower() and re.search(r"\.(pyx|pxd|pxi)\b", line)]


def build_cython():
    """Builds dlpack_cython the way the generated module's docstring and
    docs/python.md say (cythonize -i inside a copy of the generated
    directory) and returns that directory. Any Cython warning is a
    failure."""
    if importlib.util.find_spec("Cython") is None:
        if REQUIRED:
            raise RuntimeError("Cython is not installed (DLGEN_REQUIRE_TOOLS=1)")
        return None
    build = tempfile.mkdtemp(prefix="dlgen-cython-")
    shutil.copytree(GENERATED, build, dirs_exist_ok=True)
    # A maintainer's own module, written against the generated .pxd.
    with open(os.path.join(build, "cimport_check.pyx"), "w") as f:
        f.write(CIMPORT_CHECK)
    cythonize = os.path.join(os.path.dirname(sys.executable), "cythonize")
    r = subprocess.run([cythonize, "-i", "-f", "dlpack_cython.pyx", "cimport_check.pyx"], cwd=build,
                       capture_output=True, text=True)
    log = r.stdout + r.stderr
    if r.returncode != 0:
        raise RuntimeError("cythonize failed:\n" + log)
    warnings = cython_warnings(log)
    if warnings:
        raise RuntimeError("Cython warnings:\n" + "\n".join(warnings))
    return build


_cython_dir = os.environ.get("DLGEN_CYTHON_DIR") or build_cython()
CYTHON_DIR = _cython_dir and os.path.abspath(_cython_dir)  # None: no Cython here (its tests skip)
MODULES = ["dlpack_ctypes"]
if CYTHON_DIR:
    sys.path.insert(0, CYTHON_DIR)
    MODULES.append("dlpack_cython")
sys.path.insert(0, GENERATED)  # first: the build directory holds a copy of the ctypes module


@pytest.fixture(params=MODULES)
def dl(request):
    """Each generated Python module; every protocol test runs against all."""
    return importlib.import_module(request.param)


class Producer:
    """Builds hand-made (possibly malformed) managed tensors in capsules, and
    counts how often their deleter runs. It is written with the ctypes
    module's structs whatever module is under test. Like a real producer's
    code, it stays loaded for the whole session: dlpack_ctypes gives exports
    back at its next sweep, which may come after the test that made them."""

    alive = []

    def __init__(self):
        Producer.alive.append(self)
        dl = importlib.import_module("dlpack_ctypes")
        self.dl = dl
        self.deleted = 0
        self._keep = []
        vtype = dict(dl.DLManagedTensorVersioned._fields_)["deleter"]
        ltype = dict(dl.DLManagedTensor._fields_)["deleter"]
        self._vdeleter = vtype(self._count)
        self._ldeleter = ltype(self._count)
        new = ctypes.pythonapi.PyCapsule_New
        new.restype = ctypes.py_object
        new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
        self._new = new

    def _count(self, _):
        self.deleted += 1

    def capsule(self, *, versioned=True, major=None, minor=None, ndim=1, shape=(4,), strides=(1,),
                code=None, bits=32, lanes=1, device_type=None, device_id=0, data=True, flags=0,
                byte_offset=0, address=None):
        """A capsule of a managed tensor over 64 bytes of its own, or over
        address (memory of a device, say, which must never be read)."""
        dl = self.dl
        storage = (ctypes.c_char * 64)()
        shape_arr = (ctypes.c_int64 * max(len(shape), 1))(*shape) if shape is not None else None
        stride_arr = (ctypes.c_int64 * max(len(strides), 1))(*strides) if strides is not None else None
        mt = dl.DLManagedTensorVersioned() if versioned else dl.DLManagedTensor()
        if versioned:
            mt.version.major = dl.DLPACK_MAJOR_VERSION if major is None else major
            mt.version.minor = dl.DLPACK_MINOR_VERSION if minor is None else minor
            mt.flags = flags
            mt.deleter = self._vdeleter
        else:
            mt.deleter = self._ldeleter
        t = mt.dl_tensor
        t.data = (ctypes.addressof(storage) if address is None else address) if data else None
        t.device.device_type = dl.DLDeviceType.kDLCPU if device_type is None else device_type
        t.device.device_id = device_id
        t.ndim = ndim
        t.dtype.code = dl.DLDataTypeCode.kDLFloat if code is None else code
        t.dtype.bits, t.dtype.lanes = bits, lanes
        if shape_arr is not None:
            t.shape = ctypes.cast(shape_arr, ctypes.POINTER(ctypes.c_int64))
        if stride_arr is not None:
            t.strides = ctypes.cast(stride_arr, ctypes.POINTER(ctypes.c_int64))
        t.byte_offset = byte_offset
        self._keep.append((storage, shape_arr, stride_arr, mt))
        name = b"dltensor_versioned" if versioned else b"dltensor"
        return self._new(ctypes.addressof(mt), name, None)


with open(os.path.join(ROOT, "schema", "dlpack.yaml")) as f:
    RELEASES = re.findall(r'^  - version: "?(\d+\.\d+|main)"?$', f.read(), re.M)


@pytest.fixture(scope="session")
def dlgen(tmp_path_factory):
    """dlgen, built from this checkout."""
    if shutil.which("go") is None:
        if REQUIRED:
            pytest.fail("go is not installed")
        pytest.skip("go is not installed")
    exe = str(tmp_path_factory.mktemp("bin") / "dlgen")
    subprocess.run(["go", "build", "-o", exe, "./cmd/dlgen"], cwd=ROOT, check=True)
    return exe


def tool(module):
    """The command running a Python tool of the test requirements (ruff,
    mypy), or a skip (a failure under DLGEN_REQUIRE_TOOLS=1)."""
    if importlib.util.find_spec(module) is None:
        if REQUIRED:
            pytest.fail(f"{module} is not installed (run scripts/deps.sh)")
        pytest.skip(f"{module} is not installed")
    return [sys.executable, "-m", module]


def stubtest(directory, *modules):
    """Runs mypy's stubtest on modules of directory (each beside its .pyi)
    and returns its report; "" means the stubs match."""
    env = dict(os.environ, PYTHONPATH=directory, MYPYPATH=directory,
               MYPY_CACHE_DIR=tempfile.mkdtemp(prefix="dlgen-mypy-"))
    r = subprocess.run(tool("mypy.stubtest") + ["--mypy-config-file", os.devnull, *modules], cwd=directory,
                       env=env, capture_output=True, text=True)
    return "" if r.returncode == 0 else r.stdout + r.stderr


@pytest.fixture
def producer():
    return Producer()


# --- skips ---------------------------------------------------------------------
# Every skip is listed with its reason at the end of the run; under
# DLGEN_REQUIRE_TOOLS=1 (CI) a skip that tests/expected-skips.txt does not
# name fails the run, so that no check passes by not running.

EXPECTED_SKIPS = os.path.join(ROOT, "tests", "expected-skips.txt")
_skipped = []  # (node id from the repository's root, reason)
_rootpath = [ROOT]


def _glob(pattern):
    """pattern as a regular expression: * matches any text, all else itself."""
    return re.compile(re.escape(pattern).replace(r"\*", ".*") + r"\Z")


def expected_skips():
    """The python lines of tests/expected-skips.txt: (test, reason) patterns."""
    patterns = []
    with open(EXPECTED_SKIPS) as f:
        for number, line in enumerate(f, 1):
            line = line.strip()
            if not line or line.startswith("#"):
                continue
            suite, _, rest = line.partition(" ")
            test, bar, reason = rest.partition(" | ")
            if suite not in ("go", "python") or not bar:
                raise ValueError(f"{EXPECTED_SKIPS}:{number}: {line!r} is not `go|python TEST | REASON`")
            if suite == "python":
                patterns.append((_glob(test.strip()), _glob(reason.strip())))
    return patterns


def pytest_configure(config):
    _rootpath[0] = str(config.rootpath)


def _note_skip(report):
    if not report.skipped:
        return
    path, sep, rest = report.nodeid.partition("::")
    node = os.path.relpath(os.path.join(_rootpath[0], path), ROOT).replace(os.sep, "/") + sep + rest
    reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
    _skipped.append((node, reason.removeprefix("Skipped: ")))


pytest_runtest_logreport = _note_skip
pytest_collectreport = _note_skip


def _unexpected():
    patterns = expected_skips()
    return [(node, reason) for node, reason in _skipped
            if not any(t.match(node) and r.match(reason) for t, r in patterns)]


def pytest_sessionfinish(session, exitstatus):
    if REQUIRED and _unexpected() and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter):
    unexpected = set(_unexpected())
    terminalreporter.section(f"skipped: {len(_skipped)}")
    # CI (DLGEN_REQUIRE_TOOLS=1) fails on such a skip; elsewhere (make check)
    # it is what this machine lacks, said as information.
    flag = ("  <- not in tests/expected-skips.txt: a check CI must run did not" if REQUIRED
            else "  (CI runs this one)")
    for node, reason in sorted(_skipped):
        terminalreporter.write_line(f"{node}: {reason}{flag if (node, reason) in unexpected else ''}")
    if unexpected and REQUIRED:
        terminalreporter.write_line(f"FAIL: {len(unexpected)} tests skipped that CI must run")
    elif unexpected:
        terminalreporter.write_line(f"{len(unexpected)} tests skipped for what this machine lacks; CI runs them "
                                    "(make test, with DLGEN_REQUIRE_TOOLS=1, fails where they skip)")


def plug_into(config):
    """Registers this module's fixtures and hooks with pytest, once a run."""
    module = sys.modules[__name__]
    if not config.pluginmanager.is_registered(module):
        config.pluginmanager.register(module, "dlgen-harness")
