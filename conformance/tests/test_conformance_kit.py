"""dlgen's conformance kit (dlgen -lang conformance, docs/conformance-kit.md)
against every library the suite installs, each from its own venv: the
verdicts must equal the recorded matrix (docs/conformance-matrix.json), so
docs/conformance-matrix.md stays true, and dlgen's own modules must pass
every case. conformance/matrix.py --write records a new matrix."""
import os
import subprocess
import sys

import pytest

from harness import CYTHON_DIR, RELEASES, ROOT

from harness import matrix  # noqa: E402

REQUIRE = os.environ.get("DLGEN_REQUIRE_TOOLS") == "1"


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    return matrix.make_kit(str(tmp_path_factory.mktemp("kit")))


@pytest.mark.parametrize("case_by_case", [False, True], ids=["whole", "case-by-case"])
@pytest.mark.parametrize("library", list(matrix.LIBRARIES))
def test_verdicts_equal_the_recorded_matrix(kit, library, case_by_case):
    """Each library run whole (every case in one worker, as the matrix
    records it and users run it) and case by case (each case in a process
    forked after the library's import) gives the recorded verdicts: so a
    verdict that depended on the cases before it in the worker fails here."""
    if not os.path.exists(matrix.python_of(library)):
        if REQUIRE:
            pytest.fail(f"no venv for {library}: run scripts/deps.sh")
        pytest.skip(f"no venv for {library} (scripts/deps.sh makes it)")
    results, version, seconds = matrix.run(library, kit, matrix.pythonpath_for(library, CYTHON_DIR), case_by_case)
    recorded = matrix.load()[library]
    assert recorded["version"] == version, \
        f"{library} is {version}, the matrix records {recorded['version']}: record it anew"
    diff = matrix.differences(recorded, results)
    assert not diff, f"{library}'s verdicts changed; record the matrix anew if that is right:\n" + "\n".join(diff)
    if library in matrix.DLGEN_MODULES:
        bad = [f"{r['case']}: {r['verdict']}: {r['message']}" for r in results
               if r["verdict"] not in ("pass", "skip")]
        assert not bad, "dlgen's own module must pass every case:\n" + "\n".join(bad)


def test_a_library_that_does_not_import_cannot_run(kit):
    r = subprocess.run([sys.executable, "-m", "dlpack_conformance", "no_such_library_here"], cwd=kit,
                       capture_output=True, text=True)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "cannot run against no_such_library_here: no_such_library_here: ModuleNotFoundError" in r.stderr


def test_a_crash_is_that_case_s_result_and_the_run_goes_on(kit, tmp_path):
    adapter = tmp_path / "crashing_adapter.py"
    adapter.write_text(
        "import ctypes\n"
        "from dlpack_conformance.adapters import NumPy\n\n"
        "class Crashing(NumPy):\n"
        "    def from_dlpack(self, producer):\n"
        "        return f'(ctypes.string_at(0) if {producer}.shape == (6,) else xp.from_dlpack({producer}))'\n\n"
        "ADAPTER = Crashing()\n"
        "ADAPTER.imports = ('import ctypes',)\n")
    out = tmp_path / "out.json"
    r = subprocess.run([sys.executable, "-m", "dlpack_conformance", str(adapter), "--case", "consumer/versioned/",
                        "--json", str(out)], cwd=kit, capture_output=True, text=True)
    assert r.returncode == 1, r.stdout + r.stderr
    import json
    results = {x["case"]: x for x in json.loads(out.read_text())}
    crashed = results["consumer/versioned/1-d"]
    assert crashed["verdict"] == "crash" and "SIGSEGV" in crashed["message"]
    assert results["consumer/versioned/transposed-strides"]["verdict"] == "pass", "the run went on after the crash"


def test_an_xfail_file_turns_failures_into_expected_ones_and_flags_passes(kit, tmp_path):
    xfail = tmp_path / "xfail.txt"
    xfail.write_text("numpy: consumer/corpus/major-version-0  # NumPy reads a versioned tensor of major 0\n"
                     "numpy: consumer/versioned/contiguous\n")
    out = tmp_path / "out.json"
    r = subprocess.run([sys.executable, "-m", "dlpack_conformance", "numpy", "--case", "major-version-0",
                        "--case", "consumer/versioned/contiguous", "--xfail", str(xfail), "--json", str(out)],
                       cwd=kit, capture_output=True, text=True)
    import json
    results = {x["case"]: x for x in json.loads(out.read_text())}
    assert results["consumer/corpus/major-version-0"]["verdict"] == "xfail"
    assert results["consumer/versioned/contiguous"]["verdict"] == "fail"
    assert "expects it to fail: remove that line" in results["consumer/versioned/contiguous"]["message"]
    assert r.returncode == 1


def test_every_violation_names_a_requirement():
    """Each Violation the kit raises, and each requirement a case's policy
    names, is in spec.REQUIREMENTS: an unknown id would report the kit's
    own mistake as the library's."""
    import ast
    import re
    import runpy
    kit_dir = os.path.join(ROOT, "conformance", "dlpack_conformance")
    requirements = runpy.run_path(os.path.join(kit_dir, "spec.py"))["REQUIREMENTS"]
    named = set()
    for name in os.listdir(kit_dir):
        if name.endswith(".py"):
            source = open(os.path.join(kit_dir, name)).read()
            for node in ast.walk(ast.parse(source)):
                if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "Violation" \
                        and node.args and isinstance(node.args[0], ast.Constant):
                    named.add(node.args[0].value)
            named |= set(re.findall(r'"(consumer-[a-z-]+|export-[a-z-]+|max-version-accepted)"', source))
    policies = {"export-legacy"}  # reference.refused's own policies, not requirements
    unknown = sorted(n for n in named - policies if n not in requirements)
    assert not unknown, f"the kit names requirements spec.py lacks: {unknown}"
    assert len(named) > 20


# The releases with the versioned protocol (1.0 on), which have a kit; the
# corpus ships with the newest and with main.
VERSIONED = [r for r in RELEASES if r == "main" or int(r.split(".")[0]) >= 1]
WITH_CORPUS = (VERSIONED[-2], "main")


@pytest.mark.parametrize("release", VERSIONED)
def test_the_kit_of_every_versioned_release_lists_its_cases(dlgen, tmp_path, release):
    subprocess.run([dlgen, "-lang", "conformance", "-dlpack-version", release, "-out", str(tmp_path)], check=True)
    r = subprocess.run([sys.executable, "-m", "dlpack_conformance", "numpy", "--list"], cwd=tmp_path / "conformance",
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    ids = r.stdout.split()
    assert len(ids) == len(set(ids)) > 150
    assert any(i.startswith("consumer/corpus/") for i in ids) == (release in WITH_CORPUS)


def test_a_release_before_the_versioned_protocol_has_no_kit(dlgen, tmp_path):
    r = subprocess.run([dlgen, "-lang", "conformance", "-dlpack-version", "0.8", "-out", str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert "the conformance kit is for DLPack 1.0 and later" in r.stderr


def test_careless_arguments_get_exit_2_and_say_what_to_do(kit, tmp_path):
    def run(*args):
        return subprocess.run([sys.executable, "-m", "dlpack_conformance", *args], cwd=kit, capture_output=True,
                              text=True)
    r = run("numpy", "--case", "no-such-case")
    assert r.returncode == 2 and "no case of numpy matches --case no-such-case (--list lists them)" in r.stderr
    bad = tmp_path / "bad_adapter.py"
    bad.write_text("ADAPTER = 3\n")
    r = run(str(bad))
    assert r.returncode == 2 and "must define ADAPTER = an instance of a subclass of dlpack_conformance.Adapter" \
        in r.stderr
    r = run("numpy", "--json", str(tmp_path / "no" / "such" / "dir.json"))
    assert r.returncode == 2 and "--json" in r.stderr
    r = run("numpy", "--xfail", str(tmp_path / "missing.txt"))
    assert r.returncode == 2 and "--xfail" in r.stderr


def test_check_keeps_a_vendored_kit_current(dlgen, tmp_path):
    """-check works for the kit as for every other output: a current copy
    passes, an edited one fails with a diff naming the file."""
    subprocess.run([dlgen, "-lang", "conformance", "-out", str(tmp_path)], check=True)
    assert subprocess.run([dlgen, "-lang", "conformance", "-out", str(tmp_path), "-check"]).returncode == 0
    cases = tmp_path / "conformance" / "dlpack_conformance" / "cases.py"
    cases.write_text(cases.read_text() + "# a local edit\n")
    r = subprocess.run([dlgen, "-lang", "conformance", "-out", str(tmp_path), "-check"], capture_output=True,
                       text=True)
    assert r.returncode == 1
    assert "conformance/dlpack_conformance/cases.py" in r.stdout + r.stderr


# ---- the kit's tensors look like a real producer's (#34) --------------------

NUMPY_LIKE = r'''
import ctypes, json, sys
import numpy as np
from dlpack_conformance import reference as r

get_destructor = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object)(("PyCapsule_GetDestructor", ctypes.pythonapi))
get_context = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.py_object)(("PyCapsule_GetContext", ctypes.pythonapi))


def traits(capsule, size0=False):
    cap = r.Capsule(capsule)
    m, t = cap.managed, cap.managed.dl_tensor
    return {
        "capsule name": cap.name,
        "capsule destructor set": bool(get_destructor(capsule)),
        "capsule context": get_context(capsule),
        "version major": cap.version and cap.version[0],
        "flags": cap.flags,
        "manager_ctx set": bool(m.manager_ctx),
        "deleter set": bool(cap.deleter),
        "device": cap.device,
        "dtype": cap.dtype,
        "ndim": cap.ndim,
        "shape": cap.shape,
        "shape set": bool(t.shape),
        "strides set": bool(t.strides),
        # NumPy writes the strides of an empty array as it likes: the case's value.
        "strides": None if size0 else cap.strides,
        "byte_offset": cap.byte_offset,
        "data set": bool(cap.data),
        "data aligned to 16 bytes (malloc's, NumPy's)": cap.data % 16 == 0,
        "elements": cap.elements(),
    }


def numpy_drop_calls(a, kw):
    capsule = a.__dlpack__(**kw)
    counter = r.count_deleter(capsule)
    del capsule
    return counter.calls


def kit_drop_calls(kw):
    p = r.Producer(**kw)
    p.release()
    return p.calls


out = []
for versioned in (True, False):
    request = {"max_version": r.VERSION} if versioned else {}
    for shape, dtype, values in [((2, 3), "float32", [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
                                 ((4,), "int64", [1, 2, 3, 4]),
                                 ((0, 3), "float64", None)]:
        a = np.array(values if values is not None else np.zeros(shape), dtype=dtype).reshape(shape)
        code = (*r.DTYPES[dtype], 1)
        kw = dict(versioned=versioned, shape=shape, dtype=code, values=values)
        numpy = traits(a.__dlpack__(**request), 0 in shape)
        kit = traits(r.Producer(**kw).capsule, 0 in shape)
        numpy["an unconsumed capsule's death calls the deleter"] = numpy_drop_calls(a, request)
        kit["an unconsumed capsule's death calls the deleter"] = kit_drop_calls(kw)
        out.append([f"{'versioned' if versioned else 'legacy'} {shape} {dtype}", numpy, kit])
json.dump(out, sys.stdout, default=str)
'''


def test_the_kit_s_default_tensor_is_numpy_s(kit):
    """Every field of the capsule a consumer could depend on, besides the
    values a case sets, is as NumPy's __dlpack__ makes it: the kit tests
    consumers with the tensors they meet in use (a NULL manager_ctx made
    Paddle look as if it leaked everything)."""
    r = subprocess.run([sys.executable, "-c", NUMPY_LIKE], cwd=kit, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    import json
    drift = []
    for what, numpy, kit_traits in json.loads(r.stdout):
        drift += [f"{what}: {k}: NumPy {numpy[k]!r}, the kit {kit_traits[k]!r}" for k in numpy
                  if numpy[k] != kit_traits[k]]
    assert not drift, "the kit's default tensor drifted from NumPy's:\n" + "\n".join(drift)


def _adapter(tmp_path, name, helper, body):
    """An adapter file subclassing the kit's NumPy adapter, with a helper
    module beside it."""
    (tmp_path / f"{name}_helper.py").write_text(helper)
    path = tmp_path / f"{name}_adapter.py"
    path.write_text(
        "from dlpack_conformance.adapters import NumPy\n\n"
        f"class Adapter(NumPy):\n{body}\n\n"
        "ADAPTER = Adapter()\n"
        f"ADAPTER.imports = {('import sys', f'sys.path.insert(0, {str(tmp_path)!r})', f'from {name}_helper import *')!r}\n")
    return path


def _run_kit(kit, tmp_path, library, *args, python=sys.executable, env=None):
    import json
    out = tmp_path / f"out-{abs(hash((str(library), args)))}.json"
    r = subprocess.run([python, "-m", "dlpack_conformance", str(library), "--json", str(out), *args], cwd=kit,
                       capture_output=True, text=True, env=env)
    assert r.returncode in (0, 1), r.stdout + r.stderr
    results = json.loads(out.read_text())
    verdicts = {x["case"]: x["verdict"] for x in results}
    if library == "numpy":  # an adapter whose from_dlpack is its own has no raw-capsule case
        verdicts.pop("consumer/legacy/raw-capsule", None)
    return results, verdicts


def _against_numpy(kit, tmp_path, name, helper, *args, env=None):
    """Runs an adapter whose from_dlpack is the helper's `consumer(xp,
    producer)` and NumPy's, on the same cases: (the adapter's results, the
    verdicts that differ as {case: (NumPy's, the adapter's)})."""
    body = "    def from_dlpack(self, producer):\n        return f'consumer(xp, {producer})'\n"
    results, got = _run_kit(kit, tmp_path, _adapter(tmp_path, name, helper, body), *args, env=env)
    _, want = _run_kit(kit, tmp_path, "numpy", *args, env=env)
    return results, {c: (want.get(c), v) for c, v in got.items() if v != want.get(c)}


def test_a_trait_real_producers_lack_is_one_precise_failure(kit, tmp_path):
    """A consumer that mishandles one spec-allowed trait (this one never
    calls the deleter of a tensor whose manager_ctx is NULL, as Paddle 3.3.1
    does) fails the cases of that trait, naming it, and no other."""
    helper = (
        "from dlpack_conformance import reference\n"
        "def consumer(xp, p):\n"
        "    if not p.managed.manager_ctx:\n"
        "        capsule = p.__dlpack__(max_version=reference.VERSION)\n"
        "        reference.Capsule(capsule).consume()\n"
        "        return xp.asarray(p.elements())\n"
        "    return xp.from_dlpack(p)\n")
    results, changed = _against_numpy(kit, tmp_path, "leaky", helper, "--case", "consumer/versioned/")
    assert changed == {"consumer/versioned/manager_ctx-null": ("pass", "fail")}, changed
    message = next(x["message"] for x in results if x["case"] == "consumer/versioned/manager_ctx-null")
    assert "deleter ran never" in message and "manager_ctx NULL" in message, message


# ---- the library under test cannot change the kit's verdicts (#31) ----------

def test_the_kit_sets_nothing_on_ctypes_pythonapi(kit):
    """The reference module has prototypes of its own: the shared
    ctypes.pythonapi objects belong to the library too (Warp sets them)."""
    script = ("import ctypes\nfrom dlpack_conformance import reference\n"
              "p = reference.Producer(values=[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])\n"
              "reference.Capsule(p.capsule).consume()\n"
              "for name in ('PyCapsule_GetName', 'PyCapsule_GetPointer', 'PyCapsule_SetName', 'PyCapsule_New',\n"
              "             'PyCapsule_IsValid', 'PyCapsule_GetDestructor'):\n"
              "    f = getattr(ctypes.pythonapi, name)\n"
              "    assert f.restype is ctypes.c_int and f.argtypes is None, (name, f.restype, f.argtypes)\n")
    r = subprocess.run([sys.executable, "-c", script], cwd=kit, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr


MEDDLE = r'''
import ctypes, gc, io, os, signal, sys, tempfile, types


def meddle():
    """What a careless library may do to the process it is imported in."""
    api = ctypes.pythonapi
    for name in ("PyCapsule_GetName", "PyCapsule_GetPointer", "PyCapsule_SetName", "PyCapsule_New",
                 "PyCapsule_IsValid", "PyCapsule_GetDestructor"):
        f = getattr(api, name)
        f.restype, f.argtypes = ctypes.c_void_p, [ctypes.c_void_p] * 3
    sys.modules["ctypes"] = types.ModuleType("ctypes")
    sys.modules["struct"] = types.ModuleType("struct")
    os.chdir(tempfile.gettempdir())
    sys.stdout, sys.stderr = io.StringIO(), io.StringIO()
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGALRM, lambda *_: None)
    gc.disable()
    gc.set_threshold(1)
'''


def test_a_library_that_meddles_with_the_process_gets_the_same_verdicts(kit, tmp_path):
    """ctypes.pythonapi prototypes, sys.modules entries of ctypes and struct,
    the working directory, stdout/stderr, signal handlers, gc.disable(): a
    NumPy that does all that at every export and import, run in one worker,
    gets exactly NumPy's verdicts."""
    body = ("    def from_dlpack(self, producer):\n"
            "        return f'(meddle(), xp.from_dlpack({producer}))[1]'\n\n"
            "    def export(self, x, keywords):\n"
            "        return f'(meddle(), {super().export(x, keywords)})[1]'\n")
    adapter = _adapter(tmp_path, "meddling", MEDDLE, body)
    _, got = _run_kit(kit, tmp_path, adapter)
    _, want = _run_kit(kit, tmp_path, "numpy")
    assert got == want, {c: (want.get(c), v) for c, v in got.items() if v != want.get(c)}


def test_a_library_that_forks_in_from_dlpack_leaves_the_report_intact(kit, tmp_path):
    """A forked child never reports; every case gets its one answer."""
    helper = ("import os\ncalls = [0]\n"
              "def forking(xp, p):\n"
              "    calls[0] += 1\n"
              "    if calls[0] == 5:\n"
              "        os.fork()\n"
              "    return xp.from_dlpack(p)\n")
    body = "    def from_dlpack(self, producer):\n        return f'forking(xp, {producer})'\n"
    adapter = _adapter(tmp_path, "forking", helper, body)
    results, got = _run_kit(kit, tmp_path, adapter, "--case", "consumer/")
    _, want = _run_kit(kit, tmp_path, "numpy", "--case", "consumer/")
    ids = [x["case"] for x in results]
    assert len(ids) == len(set(ids)) == len(want), (len(ids), len(set(ids)), len(want))
    assert got == want, {c: (want.get(c), v) for c, v in got.items() if v != want.get(c)}


def test_a_consumer_that_retries_is_judged_by_its_last_request(kit, tmp_path):
    """mlx asks __dlpack__() and then __dlpack__(max_version=...): the first
    refusal must not turn later verdicts into "asked for a legacy capsule"."""
    helper = ("def retrying(xp, p):\n"
              "    try:\n"
              "        p.__dlpack__()\n"
              "    except BufferError:\n"
              "        pass\n"
              "    return xp.from_dlpack(p)\n")
    body = "    def from_dlpack(self, producer):\n        return f'retrying(xp, {producer})'\n"
    adapter = _adapter(tmp_path, "retrying", helper, body)
    _, got = _run_kit(kit, tmp_path, adapter, "--case", "consumer/versioned/")
    _, want = _run_kit(kit, tmp_path, "numpy", "--case", "consumer/versioned/")
    assert got == want, {c: (want.get(c), v) for c, v in got.items() if v != want.get(c)}


def _in_kit(kit, source):
    """Runs source with the kit importable (from its directory); its stdout."""
    r = subprocess.run([sys.executable, "-c", source], cwd=kit, capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stdout + r.stderr
    return r.stdout


def test_the_kit_reads_every_small_float_as_ml_dtypes_does(kit):
    """The kit's own decoder of float8, float6 and float4 (it reads capsules
    without the library under test) gives, for every bit pattern, the value
    ml_dtypes gives, infinities, NaNs and signed zeros included."""
    pytest.importorskip("ml_dtypes")
    out = _in_kit(kit, """
import math
import ml_dtypes, numpy
from dlpack_conformance import reference
from dlpack_conformance.dlpack_ctypes import _DTYPES
checked = 0
for name, (code, bits) in _DTYPES.items():
    if code not in reference.MINIFLOAT_CODES:
        continue
    dtype = getattr(ml_dtypes, name)
    for word in range(1 << bits):
        want = float(numpy.array([word], numpy.uint8).view(dtype)[0])
        got = reference.minifloat(code, word)
        same = math.isnan(got) if math.isnan(want) else got == want and math.copysign(1, got) == math.copysign(1, want)
        assert same, (name, word, got, want)
        if not math.isnan(want) and reference.small_float(code, word % 24) == want:
            assert reference.minifloat(code, reference.minifloat_word(code, want)) == want
        checked += 1
print(checked)
""")
    assert int(out) == 8 * 256 + 2 * 64 + 16


def test_sub_byte_layouts_are_told_apart(kit):
    """Packed float4 (DLPack's default) reads right; elements one a byte
    without IS_SUBBYTE_TYPE_PADDED fail subbyte-padded (a must: a consumer
    reads them packed); packed from the high bits of each byte is a warning,
    subbyte-order (the header does not say the order); with the flag, one a
    byte reads right."""
    out = _in_kit(kit, """
import ctypes
from dlpack_conformance import reference as r
from dlpack_conformance.spec import Violation
values = [[0.5, 1.0, 1.5], [2.0, 3.0, -4.0]]
def verdict(flags, raw=None, clear=False):
    p = r.Producer(dtype=(17, 4, 1), shape=(2, 3), flags=flags, values=values)
    if raw is not None:
        ctypes.memmove(p.managed.dl_tensor.data, raw, len(raw))
    if clear:
        p.managed.flags = 0
    try:
        r.check_export(p, p.capsule, expected=values, shape=(2, 3), dtype="float4_e2m1fn", max_version=r.VERSION)
    except Violation as v:
        return v.spec
    return "pass"
print(verdict(0), verdict(r.SUBBYTE_PADDED), verdict(r.SUBBYTE_PADDED, clear=True),
      verdict(0, raw=bytes([0x12, 0x34, 0x5E])), verdict(0, raw=bytes([0x21, 0x43, 0x00])))
""")
    assert out.split() == ["pass", "pass", "subbyte-padded", "subbyte-order", "elements"]


BROKEN_TABLE = """
import ctypes
from dlpack_conformance import reference as r, dlpack_ctypes as dl
from dlpack_conformance.spec import Violation

api = dl.DLPackExchangeAPI()
api.header.version.major, api.header.version.minor = r.VERSION
calls = []
# An allocator that fails without calling SetError, a to_py that fails
# without an exception, a stream that does too: each breaks the header.
api.managed_tensor_allocator = dl.DLPackManagedTensorAllocator(lambda *a: -1)
api.managed_tensor_to_py_object_no_sync = dl.DLPackManagedTensorToPyObjectNoSync(lambda *a: -1)
api.current_work_stream = dl.DLPackCurrentWorkStream(lambda *a: -1)
new = ctypes.pythonapi.PyCapsule_New
new.restype, new.argtypes = ctypes.py_object, (ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)

class Broken:
    __dlpack_c_exchange_api__ = new(ctypes.addressof(api), b"dlpack_exchange_api", None)

x = Broken()
for check in (lambda: r.check_exchange_table(x), lambda: r.check_exchange_allocator(x),
              lambda: r.check_exchange_to_py(x, [[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]]),
              lambda: r.check_exchange_stream(x), lambda: r.check_exchange_dltensor(x, None)):
    try:
        check()
        print("pass")
    except Violation as v:
        print(v.spec)
    except r.Skip:
        print("skip")
"""


def test_the_exchange_api_checks_catch_a_broken_table(kit):
    """A table that breaks the header's contract for each entry: a NULL
    managed_tensor_from_py_object_no_sync, an allocator failing without
    SetError, managed_tensor_to_py_object_no_sync and current_work_stream
    failing without a Python exception. A NULL dltensor_from_py_object_no_sync
    is allowed: a skip."""
    out = _in_kit(kit, BROKEN_TABLE)
    assert out.split() == ["exchange-api-table", "exchange-api-allocator", "exchange-api-to-py-object",
                           "exchange-api-stream", "skip"]


def test_a_consumer_s_sub_byte_and_stream_mistakes_are_named(kit):
    """A consumer that reads the kit's packed float4 one a byte fails
    subbyte-padded; one that reads it from the high bits warns subbyte-order;
    a producer asked onto CUDA host memory that raises another error than
    BufferError fails dl-device-unsupported; a consumer that drops the stream
    it was asked for, or passes stream 0 for CUDA host memory, warns."""
    out = _in_kit(kit, """
from dlpack_conformance import reference as r
from dlpack_conformance.spec import Violation
values = [[0.5, 1.0, 1.5], [2.0, 3.0, -4.0]]
def spec(check):
    try:
        check()
    except Violation as v:
        return v.spec
    return "pass"
p = r.Producer(dtype=(17, 4, 1), shape=(2, 3), values=values)
t = p.managed.dl_tensor
def reading(flags, order):
    return lambda y: r.read_elements(t.data, 0, (2, 3), None, (17, 4, 1), flags, order)
print(spec(lambda: r.check_values(p, None, reading(0, "lsb"), values)),
      spec(lambda: r.check_values(p, None, reading(r.SUBBYTE_PADDED, "lsb"), values)),
      spec(lambda: r.check_values(p, None, reading(0, "msb"), values)))
class Jaxlike:
    def __dlpack_device__(self):
        return r.CPU
    def __dlpack__(self, **kw):
        raise RuntimeError("Unknown backend cuda")
x = Jaxlike()
print(spec(lambda: r.check_to_device(x, lambda: x.__dlpack__(dl_device=r.CUDA_HOST), device=r.CUDA_HOST,
                                     declared=False, expected=values, shape=(2, 3), dtype="float32")))
q = r.Producer(shape=(2, 3), device=r.CUDA_HOST)
q.__dlpack__(max_version=r.VERSION, stream=0)
print(spec(lambda: r.check_stream_passed(q, 5)), spec(lambda: r.check_requests(q)),
      spec(lambda: r.check_stream_passed(q, 0)))
""")
    assert out.split() == ["pass", "subbyte-padded", "subbyte-order", "dl-device-unsupported",
                           "consumer-stream-passed", "consumer-stream-zero", "pass"]


# ---- nothing a library does to its process is blamed on it (#38) -------------

ISOLATED_ATTACKS = {
    # SIGCHLD ignored: the kernel reaps the kit's own children, and
    # os.waitpid on them fails with ECHILD.
    "sigchld-ignored": ("import signal\nsignal.signal(signal.SIGCHLD, signal.SIG_IGN)\n"
                        "def consumer(xp, p):\n    return xp.from_dlpack(p)\n"),
    # A helper process that outlives the case (longer than the kit's case
    # timeout) and holds every descriptor of the process it was forked from.
    "lingering-helper": ("import os, time\n"
                         "def consumer(xp, p):\n"
                         "    if os.fork() == 0:\n"
                         "        time.sleep(75)\n"
                         "        os._exit(0)\n"
                         "    return xp.from_dlpack(p)\n"),
    # A library that reads its stdin (a prompt, a REPL helper): it reads
    # nothing of the kit's requests, and does not block.
    "reads-stdin": ("import os\n"
                    "def consumer(xp, p):\n"
                    "    os.read(0, 1 << 16)\n"
                    "    return xp.from_dlpack(p)\n"),
}


@pytest.mark.parametrize("isolate", [False, True], ids=["whole", "case-by-case"])
@pytest.mark.parametrize("attack", list(ISOLATED_ATTACKS))
def test_a_library_s_process_tricks_are_not_its_verdict(kit, tmp_path, attack, isolate):
    """A library that ignores SIGCHLD, forks a helper that lingers, or reads
    stdin gets NumPy's verdicts, run whole and case by case (each case in a
    child of the worker)."""
    env = dict(os.environ, DLPACK_CONFORMANCE_ISOLATE="1" if isolate else "0")
    cases = ("--case", "consumer/versioned/contiguous", "--case", "consumer/versioned/1-d")
    results, changed = _against_numpy(kit, tmp_path, attack.replace("-", "_"), ISOLATED_ATTACKS[attack], *cases,
                                      env=env)
    assert not changed, [f"{x['case']}: {x['verdict']}: {x['message']}" for x in results]


def test_a_library_that_patches_ctypes_memory_functions_gets_the_same_verdicts(kit, tmp_path):
    """ctypes.string_at and ctypes.memmove are module attributes every
    library shares: one that replaces them (here with functions that read
    zeros and write nothing) changes no verdict, the kit having bound its own
    at import."""
    helper = ("import ctypes\n"
              "def consumer(xp, p):\n"
              "    ctypes.string_at = ctypes._string_at = lambda address, size=-1: bytes(max(size, 0))\n"
              "    ctypes.memmove = lambda *a: None\n"
              "    return xp.from_dlpack(p)\n")
    _, changed = _against_numpy(kit, tmp_path, "patching", helper, "--case", "consumer/")
    assert not changed, changed


def test_taking_a_tensor_without_renaming_is_warned_with_its_harm(kit):
    """A consumer that takes the tensor by clearing the capsule's destructor
    (nanobind's way) is a warning, consumer-rename, on the texts' words (the
    rename is how the Python specification's transfer is done, and a
    recommendation of the array API's), and the warning names what it
    breaks: a producer that tells consumption by the capsule's name."""
    out = _in_kit(kit, """
from dlpack_conformance import reference as r
from dlpack_conformance.spec import REQUIREMENTS, Violation
p = r.Producer(values=[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
r._capsule_set_destructor(p.capsule, None)
r.Capsule(p.capsule).call_deleter()
try:
    r.check_released(p)
except Violation as v:
    print(v.spec, REQUIREMENTS[v.spec][0], "|", REQUIREMENTS[v.spec][1], "|", v)
""")
    spec, strength, source, message = (w.strip() for w in out.replace(" ", " | ", 1).split("|", 3))
    assert (spec, strength) == ("consumer-rename", "should"), out
    assert "DLPack Python specification" in source and "array.__dlpack__" in source, out
    assert "a producer that tells a consumed capsule by its name frees the tensor" in message, out


# ---- one cause, one entry; a pass judged something (#41) --------------------

OLD_NUMPY = (
    "class Legacy:\n"
    "    '''What NumPy 1.26's from_dlpack does: asks __dlpack__(), never max_version.'''\n"
    "    def __init__(self, p):\n"
    "        self.p = p\n"
    "    def __dlpack__(self, **kw):\n"
    "        return self.p.__dlpack__()\n"
    "    def __dlpack_device__(self):\n"
    "        return self.p.__dlpack_device__()\n"
    "def consumer(xp, p):\n"
    "    return xp.from_dlpack(Legacy(p))\n"
    "def export(x, **kw):\n"
    "    '''What NumPy 1.26's __dlpack__ does: takes stream only.'''\n"
    "    for k in kw:\n"
    "        if k != 'stream':\n"
    "            raise TypeError(f\"__dlpack__() got an unexpected keyword argument '{k}'\")\n"
    "    return x.__dlpack__(**kw)\n")


def test_a_producer_without_max_version_is_one_entry_naming_it(kit, tmp_path):
    """NumPy 1.26's __dlpack__ takes no max_version: one entry,
    export-keywords, names it; no other entry's words come from that
    TypeError (before: export-basic, dl-device-unsupported, copy-needed,
    export-error-type x43, ...); the dtype and device protocol cases, which
    judge nothing when the export is refused, skip; the skips are one line."""
    body = ("    def export(self, x, keywords):\n"
            "        args = ''.join(f', {k}={v!r}' for k, v in keywords.items())\n"
            "        return f'export({x}{args})'\n")
    adapter = _adapter(tmp_path, "old_numpy", OLD_NUMPY, body)
    results, verdicts = _run_kit(kit, tmp_path, adapter, "--case", "producer/")
    entries = [x for x in results if x["verdict"] in ("fail", "warn", "crash", "error")
               and "unexpected keyword" in x["message"]]
    assert [(x["case"], x["spec"]) for x in entries] == [("producer/keywords/takes-max_version", "export-keywords")]
    assert "does not take max_version" in entries[0]["message"]
    protocol = {c: v for c, v in verdicts.items() if "protocol" in c}
    assert protocol and set(protocol.values()) == {"skip"}, protocol
    r = subprocess.run([sys.executable, "-m", "dlpack_conformance", str(adapter), "--case", "producer/"], cwd=kit,
                       capture_output=True, text=True)
    skips = [line for line in r.stdout.splitlines() if "does not take max_version (" in line]
    assert len(skips) == 1 and skips[0].lstrip().split(" x ")[0].isdigit(), r.stdout
    assert r.returncode == 0, r.stdout


def test_a_legacy_only_consumer_is_one_entry_quoting_its_call(kit, tmp_path):
    """A from_dlpack that asks __dlpack__() only (NumPy 1.26, JAX 0.4): one
    entry, consumer-max-version, on the plain versioned tensor; every other
    versioned case skips with one reason, which quotes the call it made."""
    adapter = _adapter(tmp_path, "old_numpy", OLD_NUMPY,
                       "    def from_dlpack(self, producer):\n        return f'consumer(xp, {producer})'\n")
    results, _ = _run_kit(kit, tmp_path, adapter, "--case", "consumer/versioned/")
    entries = {x["spec"] for x in results if x["verdict"] not in ("pass", "skip")}
    assert entries == {"consumer-max-version"}, entries
    reasons = {x["message"] for x in results if x["verdict"] == "skip"}
    assert len(reasons) == 1 and "(__dlpack__())" in reasons.pop()


def test_every_built_in_adapter_states_the_releases_it_was_tried_on(kit):
    """Each matrix row's release is among those its adapter names
    (tried_on): an adapter drives every release the matrix records."""
    import json
    rows = {row: (matrix.OLDER_RELEASES.get(row, row), m["version"]) for row, m in matrix.load().items()}
    out = _in_kit(kit, f"""
import json
from dlpack_conformance.adapters import adapter_for
rows = {rows!r}
print(json.dumps([f"{{row}} {{v}}: its adapter was tried on {{adapter_for(lib).tried_on}}"
                  for row, (lib, v) in rows.items() if v and v not in adapter_for(lib).tried_on]))
""")
    assert json.loads(out) == []


def _spelled_with(kit, tmp_path, distribution, release, library, calls):
    """What the built-in adapter of library spells (calls: Python
    expressions of the adapter a) with release of distribution installed
    (a distribution's metadata first on sys.path, the kit reads no more)."""
    import json
    site = tmp_path / f"{distribution}-{release}"
    info = site / f"{distribution}-{release}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {distribution}\nVersion: {release}\n")
    return json.loads(_in_kit(kit, f"""
import json, sys
sys.path.insert(0, {str(site)!r})
from dlpack_conformance.adapters import adapter_for
a = adapter_for({library!r})
print(json.dumps([{", ".join(calls)}]))
"""))


def test_paddle_s_adapter_drives_paddle_2_through_capsules(kit, tmp_path):
    """Paddle 2.x (2.6.2, its oldest release for Python 3.11) has no
    __dlpack__ and a from_dlpack of capsules only: with its distribution
    installed the adapter exports by paddle.utils.dlpack.to_dlpack, imports
    a producer's capsule and declares the keyword cases lacking; with 3.x it
    keeps __dlpack__ and the protocol (before: every case of Paddle 2.6.2
    failed, "paddle has no producer")."""
    calls = ['a.export("x", {})', 'a.from_dlpack("p")', '"keywords" in a.lacks']
    assert _spelled_with(kit, tmp_path, "paddlepaddle", "2.6.2", "paddle", calls) == [
        "xp.utils.dlpack.to_dlpack(x)", "xp.utils.dlpack.from_dlpack(p.__dlpack__())", True]
    assert _spelled_with(kit, tmp_path, "paddlepaddle", "3.3.1", "paddle", calls) == [
        "x.__dlpack__()", "xp.utils.dlpack.from_dlpack(p)", False]


def test_open3d_s_adapter_drives_open3d_0_18_through_capsules(kit, tmp_path):
    """Open3D 0.18 has no __dlpack__ and a Tensor.from_dlpack of capsules
    only: the adapter exports by to_dlpack() and imports a producer's
    capsule there, and keeps __dlpack__ with 0.20 (before: every case of
    0.18.0 failed, "open3d has no producer")."""
    calls = ['a.export("x", {})', 'a.from_dlpack("p")']
    assert _spelled_with(kit, tmp_path, "open3d-cpu", "0.18.0", "open3d", calls) == [
        "x.to_dlpack()", "xp.Tensor.from_dlpack(p.__dlpack__())"]
    assert _spelled_with(kit, tmp_path, "open3d-cpu", "0.20.0", "open3d", calls) == [
        "x.__dlpack__()", "xp.Tensor.from_dlpack(p)"]


def test_mlx_s_adapter_drives_mlx_before_0_32_as_a_producer_without_keywords(kit, tmp_path):
    """mlx before 0.32 (0.21.1, its oldest Linux wheel with DLPack) has no
    from_dlpack and a __dlpack__ without keywords: there the adapter is a
    producer alone and lacks keywords; 0.32 keeps both sides (before: every
    consumer case of 0.21.1 failed, "mlx has no consumer")."""
    calls = ["list(a.sides)", '"keywords" in a.lacks']
    assert _spelled_with(kit, tmp_path, "mlx", "0.21.1", "mlx", calls) == [["producer"], True]
    assert _spelled_with(kit, tmp_path, "mlx", "0.32.4", "mlx", calls) == [["producer", "consumer"], False]


def test_dpnp_s_adapter_drives_dpnp_before_0_17_as_a_producer_with_its_own_spelling(kit, tmp_path):
    """dpnp 0.15 (its oldest release on PyPI) has no permute_dims and a
    __dlpack__ taking stream alone; before 0.17 it names no int8, int16 or
    unsigned dtype and its from_dlpack imports no CPU tensor: the adapter
    transposes and lacks keywords before 0.16, names dtypes by strings and is
    a producer alone before 0.17 (before: on 0.15.0 30 producer inputs
    skipped as not made and every consumer case failed, "dpnp has no
    consumer"; on 0.16.0 18 inputs skipped as not made)."""
    calls = ['a.permute("x", (1, 0))', 'a.dtype("uint8")', "list(a.sides)", '"keywords" in a.lacks']
    assert _spelled_with(kit, tmp_path, "dpnp", "0.15.0", "dpnp", calls) == [
        "xp.transpose(x, (1, 0))", "'uint8'", ["producer"], True]
    assert _spelled_with(kit, tmp_path, "dpnp", "0.16.0", "dpnp", calls) == [
        "xp.permute_dims(x, (1, 0))", "'uint8'", ["producer"], False]
    assert _spelled_with(kit, tmp_path, "dpnp", "0.20.0", "dpnp", calls) == [
        "xp.permute_dims(x, (1, 0))", "xp.uint8", ["producer", "consumer"], False]


def test_nanobind_s_adapter_reads_nanobind_2_0_s_capsules_as_a_consumer_alone(kit, tmp_path):
    """Before 2.10 nanobind has no ndarray object of its own: tests/nanobind
    returns a bare capsule there, which the adapter reads back, a consumer
    alone; from 2.10.1 (nb::array_api) it reads the object's __dlpack__ and
    keeps both sides (before: on 2.0.0 every producer case failed,
    "dlpack_nanobind has no producer", and 41 consumer cases were kit errors,
    "'PyCapsule' object has no attribute '__dlpack__'")."""
    calls = ["list(a.sides)", "a.read()"]
    assert _spelled_with(kit, tmp_path, "nanobind", "2.0.0", "dlpack_nanobind", calls) == [
        ["consumer"], "reference.Capsule(y).elements()"]
    assert _spelled_with(kit, tmp_path, "nanobind", "2.10.1", "dlpack_nanobind", calls) == [
        ["producer", "consumer"], "reference.Capsule(y.__dlpack__(max_version=reference.VERSION)).elements()"]


def test_numpy_s_adapter_imports_by_numpy_1_22_s_underscored_from_dlpack(kit, tmp_path):
    """NumPy 1.22, the first with DLPack, names its from_dlpack
    _from_dlpack (1.23 renamed it): the adapter calls that there (before:
    every consumer case of 1.22.0 failed, "numpy has no consumer")."""
    calls = ['a.from_dlpack("p")']
    assert _spelled_with(kit, tmp_path, "numpy", "1.22.0", "numpy", calls) == ["xp._from_dlpack(p)"]
    assert _spelled_with(kit, tmp_path, "numpy", "1.23.0", "numpy", calls) == ["xp.from_dlpack(p)"]


def test_an_adapter_s_spelling_is_not_the_library_s_verdict(kit, tmp_path):
    """An adapter whose permute reverses every axis makes NumPy a (4, 3, 2)
    array where the case asks for (4, 2, 3): NumPy's capsule describes the
    array exactly, so the case passes, saying the array is not the one the
    case asked for (before: FAIL shape, "the array's is (4, 2, 3)")."""
    body = "    def permute(self, x, axes):\n        return f'xp.transpose({x})'\n"
    adapter = _adapter(tmp_path, "reversing", "", body)
    results, verdicts = _run_kit(kit, tmp_path, adapter, "--case", "producer/layout/3-d-permuted/")
    assert set(verdicts.values()) == {"pass"}, [f"{x['case']}: {x['message']}" for x in results]
    assert all("the library made another array than the case asked for: it holds shape (4, 3, 2)" in x["message"]
               for x in results), results[0]["message"]


def test_a_library_s_own_exception_is_its_verdict_not_the_kit_s(kit, tmp_path):
    """A consumer that takes the tensor and then raises in its own code
    (here its array's tolist) is judged by the case's rule (consumer-basic:
    a fail), naming where it raised; before, a KIT ERROR and exit 3."""
    helper = ("class Broken:\n"
              "    def __init__(self, a):\n"
              "        self.a = a\n"
              "    def sum(self):\n"
              "        return self.a.sum()\n"
              "    def tolist(self):\n"
              "        raise ValueError('a bug of the library')\n"
              "def consumer(xp, p):\n"
              "    return Broken(xp.from_dlpack(p))\n")
    adapter = _adapter(tmp_path, "raising", helper,
                       "    def from_dlpack(self, producer):\n        return f'consumer(xp, {producer})'\n")
    r = subprocess.run([sys.executable, "-m", "dlpack_conformance", str(adapter), "--case",
                        "consumer/versioned/contiguous", "--json", str(tmp_path / "out.json")],
                       cwd=kit, capture_output=True, text=True)
    import json
    [got] = json.loads((tmp_path / "out.json").read_text())
    assert (got["verdict"], got["spec"], r.returncode) == ("fail", "consumer-basic", 1), (got, r.stdout)
    assert "the library raised ValueError: a bug of the library (raised in the library's code, raising_helper.py" \
        in got["message"], got["message"]


def test_the_exit_status_follows_the_verdicts_of_the_cases_run(kit, tmp_path):
    """A library that cannot make bool: the bool case alone skips and exits
    0, as it does with passing neighbours (before: 1, "most producer cases
    were not judged: 1 of 1 skipped"); the rule stays for a whole side."""
    body = ("    def dtype(self, name):\n"
            "        return 'xp.no_such_bool' if name == 'bool' else super().dtype(name)\n")
    adapter = _adapter(tmp_path, "nobool", "", body)

    def status(*cases):
        args = [a for c in cases for a in ("--case", c)]
        return subprocess.run([sys.executable, "-m", "dlpack_conformance", str(adapter), *args], cwd=kit,
                              capture_output=True, text=True).returncode
    assert status("producer/dtype/bool/max_version=none") == 0
    assert status("producer/dtype/bool/max_version=none", "producer/dtype/int8/max_version=none",
                  "producer/dtype/int16/max_version=none") == 0


def test_a_versioned_tensor_in_a_legacy_capsule_is_named_so(kit):
    """A DLManagedTensorVersioned in a capsule named 'dltensor' is reported
    as that, capsule-name, not as the ndim its bytes give read the legacy
    way ("ndim is 1085096016")."""
    out = _in_kit(kit, """
import ctypes
from dlpack_conformance import reference as r
from dlpack_conformance.spec import Violation
p = r.Producer(values=[[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
wrong = r._capsule_new(ctypes.addressof(p.managed), b"dltensor", None)
try:
    r.Capsule(wrong)
except Violation as v:
    print(v.spec, "|", v)
""")
    assert out.startswith("capsule-name | the capsule is named 'dltensor' but holds a DLManagedTensorVersioned"), out


def test_the_adapter_api_as_documented(kit, tmp_path):
    """An adapter on Adapter that defines make_readonly runs the read-only
    cases (lacks follows what it defines; before, {"readonly"} skipped them
    silently); ViaNumPy is exported; read() may return the library's own
    array (the kit converts it); a typed importer's from_dlpack is told the
    tensor's dtype."""
    (tmp_path / "api_adapter.py").write_text(
        "import sys\n"
        f"sys.path.insert(0, {str(tmp_path)!r})\n"
        "from dlpack_conformance import Adapter, ViaNumPy\n"
        "assert issubclass(ViaNumPy, Adapter)\n\n"
        "class Api(Adapter):\n"
        "    module = 'numpy'\n"
        "    imports = ('from api_helper import typed',)\n"
        "    def dtype(self, name):\n"
        "        return 'xp.bool_' if name == 'bool' else f'xp.{name}'\n"
        "    def permute(self, x, axes):\n"
        "        return f'xp.transpose({x}, {axes!r})'\n"
        "    def make_readonly(self, x):\n"
        "        return f'{x}.flags.writeable = False'\n"
        "    def read(self):\n"
        "        return 'y'\n"
        "    def from_dlpack(self, producer, dtype=None):\n"
        "        return f'typed(xp, {producer}, {dtype!r})'\n\n"
        "ADAPTER = Api()\n")
    (tmp_path / "api_helper.py").write_text(
        "from dlpack_conformance import reference\n"
        "def typed(xp, p, dtype):\n"
        "    y = xp.from_dlpack(p)\n"
        "    if p.dtype in [(*c, 1) for c in reference.DTYPES.values()]:\n"
        "        assert dtype is not None and (*reference.DTYPES[dtype], 1) == tuple(p.dtype), (dtype, p.dtype)\n"
        "    return y\n")
    results, got = _run_kit(kit, tmp_path, tmp_path / "api_adapter.py")
    _, want = _run_kit(kit, tmp_path, "numpy")
    assert [c for c in got if c.startswith("producer/read-only/")] and \
        all(got[c] == want[c] for c in got if c.startswith("producer/read-only/")), got
    changed = {c: (want.get(c), v) for c, v in got.items() if v != want.get(c)}
    assert not changed, {c: next(x["message"] for x in results if x["case"] == c) for c in changed}


def test_the_readme_counts_the_matrix_s_libraries():
    """The README's count of the matrix's libraries is the matrix's (it said
    sixteen of 19)."""
    import re
    with open(os.path.join(ROOT, "README.md")) as f:
        said = re.findall(r"results for (\d+) libraries\]\(docs/conformance-matrix\.md\)", f.read())
    assert said == [str(len(set(matrix.LIBRARIES) - set(matrix.OLDER_RELEASES)))], said


def test_a_consumer_that_relies_on_alignment_crashes_where_numpy_s_arrays_would_crash_it(kit, tmp_path):
    """The kit's tensors are aligned as NumPy's small arrays are (16 bytes,
    no more), one case's to 64; the adapter's operation runs on every
    imported tensor. A consumer that aborts computing on data not 64-byte
    aligned (TensorFlow 2.21's tf.reduce_sum: "Check failed: IsAligned()")
    crashes on the plain tensor, caught in the worker, and passes the
    64-byte one (before: no operation ran and every tensor was 64-aligned)."""
    helper = ("import os\n"
              "def total(y):\n"
              "    if y.ctypes.data % 64:\n"
              "        os.abort()\n"
              "    return y.sum()\n")
    adapter = _adapter(tmp_path, "aligned", helper, "    def operate(self, y):\n        return f'total({y})'\n")
    cases = ("--case", "consumer/versioned/contiguous", "--case", "consumer/versioned/data-aligned-to-64-bytes")
    for isolate in ("0", "1"):
        results, verdicts = _run_kit(kit, tmp_path, adapter, *cases, env=dict(os.environ, DLPACK_CONFORMANCE_ISOLATE=isolate))
        assert verdicts == {"consumer/versioned/contiguous": "crash",
                            "consumer/versioned/data-aligned-to-64-bytes": "pass"}, results
        assert "SIGABRT" in results[0]["message"]
    out = _in_kit(kit, "from dlpack_conformance import reference as r\n"
                       "print(r.Producer().managed.dl_tensor.data % 32, r.Producer(align=64).managed.dl_tensor.data % 64)")
    assert out.split() == ["16", "0"]


def test_a_library_that_crashes_often_is_imported_twice(kit, tmp_path):
    """After the first crash the fresh worker forks each case after the
    import: a library crashing on every consumer case costs two imports,
    not one per crash (TensorFlow 2.21 crashes on 30)."""
    imports = tmp_path / "imports.txt"
    helper = (f"with open({str(imports)!r}, 'a') as f:\n"
              "    f.write('imported\\n')\n"
              "import ctypes\n"
              "def consumer(xp, p):\n"
              "    ctypes.string_at(0)\n")
    _, changed = _against_numpy(kit, tmp_path, "crashing", helper, "--case", "consumer/versioned/")
    assert len(changed) > 5 and {v for _, v in changed.values()} == {"crash"}, changed
    assert imports.read_text().count("imported") == 2


LYING_ALLOCATOR = """
import ctypes
from dlpack_conformance import reference as r, dlpack_ctypes as dl
from dlpack_conformance.spec import Violation
api = dl.DLPackExchangeAPI()
api.header.version.major, api.header.version.minor = r.VERSION
made = r.Producer(device=r.ABSENT_DEVICE, data=4096, shape=(2, 3))
def alloc(proto, out, ctx, set_error):
    ctypes.cast(out, ctypes.POINTER(ctypes.c_void_p))[0] = ctypes.addressof(made.managed)
    return 0
api.managed_tensor_allocator = dl.DLPackManagedTensorAllocator(alloc)
new = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)(("PyCapsule_New", ctypes.pythonapi))
class Lying:
    __dlpack_c_exchange_api__ = new(ctypes.addressof(api), b"dlpack_exchange_api", None)
try:
    print(r.check_exchange_allocator(Lying(), device=r.ABSENT_DEVICE))
except Violation as v:
    print(v.spec, made.calls)
print(r.Producer(dtype=(0, 4, 1), shape=(2, 3), values=[[1, 2, 3], [-1, -2, -3]]).dtype)
"""


def test_the_review_s_mends(kit):
    """An allocator that succeeds on a device no library has fails
    exchange-api-allocator (its deleter still called, once); a Producer of a
    sub-byte integer dtype (int4) is made, not a TypeError."""
    assert _in_kit(kit, LYING_ALLOCATOR).split() == ["exchange-api-allocator", "1", "(0,", "4,", "1)"]


FAILING_CPU_ALLOCATOR = """
from dlpack_conformance import reference as r
from dlpack_conformance.spec import Violation
def allocate(entry):
    def call(proto, out, ctx, set_error):
        r._SET_ERROR(getattr(set_error, "value", set_error))(None, b"MemoryError", b"no memory")
        raise MemoryError("no memory")
    return call
r._ALLOCATE, r._entry = allocate, lambda x, name: 1
for device in (r.CPU, r.ABSENT_DEVICE):
    try:
        print(r.check_exchange_allocator(object(), device=device))
    except Violation as v:
        print(v.spec)
"""


def test_a_cpu_allocation_failing_by_set_error_and_an_exception_is_the_cpu_failure(kit):
    """An allocator that calls SetError once and raises fails on the CPU as
    one returning -1 after SetError does (exchange-api-allocate-cpu: every
    library can allocate there); on a device no library has it is the
    failure asked for (before: the CPU failure was taken as a refusal)."""
    lines = _in_kit(kit, FAILING_CPU_ALLOCATOR).splitlines()
    assert lines[0] == "exchange-api-allocate-cpu", lines
    assert lines[1].startswith("failed, calling SetError (b'MemoryError', b'no memory')"), lines


def test_a_forked_case_that_hangs_is_run_again_unforked(kit, tmp_path):
    """A child forked from a multithreaded library may deadlock (JAX warns
    so at every fork): a forked case that hangs is run again in a worker of
    its own, and its verdict is that run's, not a crash."""
    # A forked child: its pid is not the worker's, recorded at import.
    helper = ("import os, time\n"
              "WORKER = os.getpid()\n"
              "def consumer(xp, p):\n"
              "    if os.getpid() != WORKER:\n"
              "        time.sleep(3600)\n"
              "    return xp.from_dlpack(p)\n")
    results, changed = _against_numpy(kit, tmp_path, "deadlocking", helper, "--case", "consumer/versioned/contiguous",
                                      env=dict(os.environ, DLPACK_CONFORMANCE_ISOLATE="1",
                                               DLPACK_CONFORMANCE_TIMEOUT="3"))
    assert not changed, [x["message"] for x in results]


def test_every_consumer_case_runs_the_adapter_s_operation(kit, tmp_path):
    """The array-API adapter's operation is the library's sum, run on every
    tensor a consumer case reads, the raw capsule's too: a library whose sum
    fails on data not 64-byte aligned fails consumer-usable on the plain
    tensor (a warning: consumer-usable is a should) and passes the 64-byte
    one (before: the default adapter ran no
    operation and every case passed)."""
    (tmp_path / "fakesum.py").write_text(
        "from numpy import *  # noqa: F403\n"
        "import numpy\n"
        "def sum(y):\n"
        "    if y.ctypes.data % 64:\n"
        "        raise MemoryError('misaligned')\n"
        "    return numpy.sum(y)\n"
        "def from_dlpack(x):\n"
        "    return numpy.from_dlpack(x if hasattr(x, '__dlpack__') else Raw(x))\n"
        "class Raw:\n"
        "    def __init__(self, c):\n"
        "        self.c = c\n"
        "    def __dlpack__(self, **kw):\n"
        "        return self.c\n"
        "    def __dlpack_device__(self):\n"
        "        return (1, 0)\n")
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(tmp_path), os.environ.get("PYTHONPATH", "")]))
    cases = ("consumer/versioned/contiguous", "consumer/versioned/data-aligned-to-64-bytes",
             "consumer/legacy/raw-capsule")
    results, verdicts = _run_kit(kit, tmp_path, "fakesum", *(a for c in cases for a in ("--case", c)), env=env)
    assert verdicts == {"consumer/versioned/contiguous": "warn",
                        "consumer/versioned/data-aligned-to-64-bytes": "pass",
                        "consumer/legacy/raw-capsule": "warn"}, results
    assert all("MemoryError: misaligned" in r["message"] for r in results if r["verdict"] == "warn"), results


def test_every_built_in_consumer_that_computes_names_its_operation(kit):
    """Each built-in adapter of a library that can compute on what it
    imports names an operation; only those of libraries that compute nothing
    (ViaNumPy: tvm_ffi, onnxruntime, pyarrow.Tensor, dlgen's modules,
    nanobind) name none (before: only NumPy's and TensorFlow's did)."""
    out = _in_kit(kit, "from dlpack_conformance import adapters as a\n"
                       "print(sorted(n for n, c in a.BUILTIN.items() if 'consumer' in c.sides and c('x').operate('y') is None))\n"
                       "print(sorted(n for n, c in a.BUILTIN.items() if issubclass(c, a.ViaNumPy)))\n")
    none, vianumpy = out.splitlines()
    assert none == vianumpy, out


def test_an_exception_a_c_function_of_the_library_raises_is_the_library_s(kit, tmp_path):
    """A C function of the library (here a builtin its imported array calls
    to list itself) raising after the import leaves no frame of the
    library's: the exception is still the library's, judged by the case's
    rule, not a kit error and exit 3 (before: "the kit could not judge this
    case")."""
    helper = ("import functools, types\n"
              "def consumer(xp, p):\n"
              "    a = xp.from_dlpack(p)\n"
              "    return types.SimpleNamespace(array=a, tolist=functools.partial(int, 'not a number'),\n"
              "                                 sum=functools.partial(int, '1'))\n")
    results, changed = _against_numpy(kit, tmp_path, "cfunction", helper, "--case", "consumer/versioned/contiguous")
    assert changed == {"consumer/versioned/contiguous": ("pass", "fail")}, results
    assert "the library raised ValueError: invalid literal" in results[0]["message"], results


def test_every_producer_case_checks_the_array_the_adapter_made(kit, tmp_path):
    """Not only the layout cases: in a dtype case and a keyword case too, an
    adapter whose asarray makes another array (its values reversed) is
    named, and NumPy's capsule, which describes the array exactly, passes
    (before: FAIL, "the array holds ...", the adapter's doing)."""
    body = ("    def asarray(self, values, dtype):\n"
            "        return f'xp.flip({super().asarray(values, dtype)})'\n")
    adapter = _adapter(tmp_path, "flipping", "", body)
    results, verdicts = _run_kit(kit, tmp_path, adapter, "--case", "producer/dtype/int32/", "--case",
                                 "producer/keywords/takes-copy", "--case", "producer/read-only/")
    assert verdicts and set(verdicts.values()) == {"pass"}, [f"{x['case']}: {x['message']}" for x in results]
    judged = [x for x in results if x["case"] != "producer/read-only/legacy"]  # judges no values
    assert len(judged) == 5 and all("the library made another array than the case asked for" in x["message"]
                                    for x in judged), results


def test_the_docs_list_the_releases_each_adapter_was_tried_on(kit):
    """docs/conformance-kit.md's table of releases is each built-in
    adapter's tried_on, the oldest releases tried (array-api-strict 1.0,
    apache-tvm-ffi 0.1.0) among them."""
    import re
    with open(os.path.join(ROOT, "docs", "conformance-kit.md")) as f:
        section = f.read().split("## Releases the built-in adapters were tried on", 1)[1].split("\n## ", 1)[0]
    documented = {m[0]: m[1] for m in re.findall(r"^\| `([\w.]+)` \| (.+) \|$", section, re.M)}
    out = _in_kit(kit, "from dlpack_conformance import adapters as a\n"
                       "seen = set()\n"
                       "for n, c in a.BUILTIN.items():\n"
                       "    if c.tried_on and c not in seen:\n"
                       "        seen.add(c)\n"
                       "        print(n + '|' + ', '.join(c.tried_on))\n")
    assert documented == dict(line.split("|") for line in out.splitlines())
    assert documented["array_api_strict"].startswith("1.0, ") and documented["tvm_ffi"].startswith("0.1.0, ")
