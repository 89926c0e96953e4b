"""The conformance kit's verdicts and report on small fake libraries: no
false comfort (a library without DLPack passes nothing; skip-dominated runs
do not exit 0), no false alarm (one-sided and 1-d libraries are declared,
a kit error is not the library's failure, a `should` stays a warning), and
a report a maintainer reads in a minute (one entry per broken rule, -q on a
screen, the Markdown report, no BrokenPipeError under `| head`)."""
import json
import os
import subprocess
import sys
import textwrap

import pytest

from harness import ROOT

from harness import matrix  # noqa: E402

pytest.importorskip("numpy")

# Fake libraries, each a module beside its adapter file.
LIBRARIES = {
    # No DLPack at all: arrays without __dlpack__, no from_dlpack.
    "nodl": """
        class Box:
            def __init__(self, values):
                self.values = values
            def __getitem__(self, index):
                return self
        def asarray(values, dtype=None):
            return Box(values)
        def permute_dims(x, axes):
            return x
        def reshape(x, shape):
            return x
        def broadcast_to(x, shape):
            return x
        float32 = "float32"
    """,
    # NumPy's arrays, no from_dlpack: an exporter only.
    "exporter": """
        import numpy
        from numpy import asarray, permute_dims, reshape, broadcast_to, float32, sum
    """,
    # Vectors only: asarray and reshape refuse anything but 1-d.
    "vectors": """
        import numpy
        from numpy import float32, broadcast_to
        def asarray(values, dtype=None):
            a = numpy.asarray(values, dtype=dtype)
            if a.ndim != 1:
                raise ValueError("vectors only")
            return a
        def reshape(x, shape):
            raise ValueError("vectors only")
        def permute_dims(x, axes):
            raise ValueError("vectors only")
    """,
    # __dlpack_device__ raises ValueError (ndonnx did).
    "nodevice": """
        import numpy
        from numpy import permute_dims, reshape, broadcast_to, float32, from_dlpack, sum
        class Array(numpy.ndarray):
            def __dlpack_device__(self):
                raise ValueError("this array has no device")
        def asarray(values, dtype=None):
            return numpy.asarray(values, dtype=dtype).view(Array)
    """,
    # One design flaw: from_dlpack reverses the rows it imports.
    "flipped": """
        import numpy
        from numpy import asarray, permute_dims, reshape, broadcast_to, float32, sum
        def from_dlpack(x):
            a = numpy.from_dlpack(x)
            return numpy.flip(a, 0) if a.ndim else a
    """,
    # nanobind's way: takes the tensor by clearing the capsule's destructor,
    # not by renaming the capsule; then calls the deleter itself.
    "unrenamed": """
        import ctypes
        import numpy
        from numpy import asarray, permute_dims, reshape, broadcast_to, float32, sum
        from dlpack_conformance import reference
        _set_destructor = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.c_void_p)(
            ("PyCapsule_SetDestructor", ctypes.pythonapi))
        def from_dlpack(x):
            capsule = x.__dlpack__(max_version=(1, 0))
            tensor = reference.Capsule(capsule)
            values = numpy.array(tensor.elements(), dtype=numpy.float32)
            _set_destructor(capsule, None)
            tensor.call_deleter()
            return values
    """,
    # PyTorch's way with a tensor it refuses: calls the deleter, raises, and
    # leaves the capsule named and destructed as it was.
    # (It takes legacy tensors, by copy, so that it has a consumer.)
    "refuser": """
        from numpy import asarray, permute_dims, reshape, broadcast_to, float32, sum
        from dlpack_conformance import reference
        def from_dlpack(x):
            capsule = reference.Capsule(x.__dlpack__(max_version=(1, 0)))
            if capsule.version is None:
                return asarray(capsule.elements())
            capsule.call_deleter()
            raise BufferError("too many elements")
    """,
    # ndonnx's way: __dlpack__ and from_dlpack are there, and refuse everything.
    "refuseall": """
        import numpy
        from numpy import permute_dims, reshape, broadcast_to, float32, sum
        class Array(numpy.ndarray):
            def __dlpack__(self, **kwargs):
                raise BufferError("no export of array data")
        def asarray(values, dtype=None):
            return numpy.asarray(values, dtype=dtype).view(Array)
        def from_dlpack(x):
            raise BufferError("no import either")
    """,
    # Open3D's __dlpack_device__: a plain Enum member (not an int) and an int,
    # as the array API's Tuple[Enum, int] allows.
    "enumdevice": """
        import enum
        import numpy
        from numpy import permute_dims, reshape, broadcast_to, float32, from_dlpack, sum
        class DLDeviceType(enum.Enum):
            CPU = 1
        class Array(numpy.ndarray):
            def __dlpack_device__(self):
                return (DLDeviceType.CPU, 0)
        def asarray(values, dtype=None):
            return numpy.asarray(values, dtype=dtype).view(Array)
    """,
}

ADAPTERS = {
    "nodl": "class A(Adapter):\n    module = 'nodl'\n    dtypes = ('float32',)\n",
    "exporter": "class A(Adapter):\n    module = 'exporter'\n    dtypes = ('float32',)\n",
    "exporter_declared": "class A(Adapter):\n    module = 'exporter'\n    dtypes = ('float32',)\n"
                         "    sides = ('producer',)\n",
    "vectors": "class A(Adapter):\n    module = 'vectors'\n    dtypes = ('float32',)\n    sides = ('producer',)\n",
    "vectors_declared": "class A(Adapter):\n    module = 'vectors'\n    dtypes = ('float32',)\n"
                        "    sides = ('producer',)\n    ndims = (1,)\n    lacks = frozenset({'readonly'})\n",
    "nodevice": "class A(Adapter):\n    module = 'nodevice'\n    dtypes = ('float32',)\n",
    "flipped": "class A(Adapter):\n    module = 'flipped'\n    dtypes = ('float32',)\n"
               "    def read(self):\n        return 'y.tolist()'\n",
    "refuser": "class A(Adapter):\n    module = 'refuser'\n    dtypes = ('float32',)\n",
    "refuseall": "class A(Adapter):\n    module = 'refuseall'\n    dtypes = ('float32',)\n",
    "enumdevice": "class A(Adapter):\n    module = 'enumdevice'\n    dtypes = ('float32',)\n",
    "unrenamed": "class A(Adapter):\n    module = 'unrenamed'\n    dtypes = ('float32',)\n"
                 "    def read(self):\n        return 'y.tolist()'\n",
    # The adapter's read names what the library lacks: the kit cannot judge.
    "kiterror": "class A(NumPy):\n    def read(self):\n"
                "        return 'no_such_reader(y)'\n",
}


@pytest.fixture(scope="module")
def kit(tmp_path_factory):
    return matrix.make_kit(str(tmp_path_factory.mktemp("kit")))


@pytest.fixture(scope="module")
def libs(tmp_path_factory):
    d = tmp_path_factory.mktemp("libs")
    for name, source in LIBRARIES.items():
        (d / f"{name}.py").write_text(textwrap.dedent(source))
    for name, source in ADAPTERS.items():
        (d / f"{name}_adapter.py").write_text(
            "from dlpack_conformance import Adapter\nfrom dlpack_conformance.adapters import NumPy\n\n"
            + source + "\nADAPTER = A()\n")
    return d


def kit_run(kit, libs, *args):
    env = dict(os.environ, PYTHONPATH=str(libs))
    args = [str(libs / f"{a}_adapter.py") if a in ADAPTERS else a for a in args]
    return subprocess.run([sys.executable, "-m", "dlpack_conformance", *args], cwd=kit, env=env,
                          capture_output=True, text=True, timeout=300)


def results_of(kit, libs, tmp_path, *args):
    out = tmp_path / "out.json"
    r = kit_run(kit, libs, *args, "--json", str(out))
    return r, json.loads(out.read_text())


def test_a_library_without_dlpack_passes_nothing_and_fails(kit, libs, tmp_path):
    r, results = results_of(kit, libs, tmp_path, "nodl")
    assert r.returncode == 1, r.stdout + r.stderr
    assert results and not [x for x in results if x["verdict"] == "pass"]
    assert {x["spec"] for x in results} == {"producer-exists", "consumer-exists"}
    summary = r.stdout.splitlines()[0]
    assert "producer judged 0 of" in summary and "(no producer)" in summary
    assert "consumer judged 0 of" in summary and "(no consumer)" in summary
    assert "nodl has no consumer: `xp.from_dlpack` raised AttributeError" in r.stdout
    assert "nodl has no producer: `x.__dlpack__` raised AttributeError" in r.stdout
    assert "sides = ('producer',)" in r.stdout, "it says how to declare a one-sided library"


def test_a_library_whose_dlpack_refuses_everything_has_neither_side(kit, libs, tmp_path):
    """ndonnx's case: the names are there, every plain input is refused. The
    run fails plainly, every case on its missing side, not on 11 of 300."""
    r, results = results_of(kit, libs, tmp_path, "refuseall")
    assert r.returncode == 1, r.stdout + r.stderr
    assert {(x["verdict"], x["spec"]) for x in results} == {("fail", "producer-exists"),
                                                           ("fail", "consumer-exists")}
    summary = r.stdout.splitlines()[0]
    assert "(no producer)" in summary and "(no consumer)" in summary, summary
    assert ("refuseall has no producer: it refuses even the plainest input: `x.__dlpack__()` raised "
            "BufferError: no export of array data") in r.stdout
    assert ("refuseall has no consumer: it refuses even the plainest input: `xp.from_dlpack(producer)` "
            "raised BufferError: no import either") in r.stdout


def test_an_enum_device_type_is_a_device_type(kit, libs, tmp_path):
    r, results = results_of(kit, libs, tmp_path, "enumdevice", "--case", "producer/__dlpack_device__",
                            "--case", "producer/layout/contiguous/max_version=1.0")
    assert {x["case"]: x["verdict"] for x in results} == {
        "producer/__dlpack_device__": "pass", "producer/layout/contiguous/max_version=1.0": "pass"}, r.stdout


def test_a_one_sided_library_fails_unless_declared(kit, libs, tmp_path):
    r, results = results_of(kit, libs, tmp_path, "exporter", "--case", "producer/layout/contiguous",
                            "--case", "consumer/versioned/contiguous")
    assert r.returncode == 1
    assert [x["spec"] for x in results if x["side"] == "consumer"] == ["consumer-exists"]
    r, results = results_of(kit, libs, tmp_path, "exporter_declared", "--case", "producer/layout/contiguous",
                            "--case", "consumer/versioned/contiguous")
    assert r.returncode == 0, r.stdout + r.stderr
    consumer = [x for x in results if x["side"] == "consumer"]
    assert [(x["verdict"], x["declared"]) for x in consumer] == [("skip", True)]
    assert "producer-only" in consumer[0]["message"]
    assert {x["verdict"] for x in results if x["side"] == "producer"} == {"pass"}


def test_a_1d_library_is_judged_when_declared_and_fails_when_skips_dominate(kit, libs, tmp_path):
    r, results = results_of(kit, libs, tmp_path, "vectors", "--case", "producer/")
    assert r.returncode == 1, r.stdout + r.stderr
    judged = sum(x["verdict"] not in ("skip", "error") for x in results)
    assert judged < len(results) / 2
    assert f"producer judged {judged} of {len(results)}" in r.stdout.splitlines()[0]
    assert "most producer cases were not judged" in r.stdout
    r, results = results_of(kit, libs, tmp_path, "vectors_declared", "--case", "producer/")
    assert r.returncode == 0, r.stdout + r.stderr
    verdicts = {x["case"]: x for x in results}
    assert verdicts["producer/layout/stepped/max_version=1.0"]["verdict"] == "pass"
    assert verdicts["producer/dtype/float32/max_version=none"]["about"].startswith("24 float32")
    skipped = [x for x in results if x["verdict"] == "skip"]
    # skipped as declared, or for a feature the library does not publish (the
    # exchange API; the dtype and device exchange protocol, an RFC)
    assert skipped and all(x["declared"] or "publishes no __dlpack" in x["message"] for x in skipped)
    assert "makes 1-d arrays only" in verdicts["producer/layout/0-d/max_version=none"]["message"]
    # (the exchange-API and exchange-protocol cases skip: the library publishes neither)
    rest = [x for x in results if "publishes no __dlpack" not in x["message"]]
    judged = sum(x["verdict"] != "skip" for x in rest)
    assert judged > len(rest) * 0.7, f"{judged} of {len(rest)}"


def test_a_raising_dlpack_device_is_a_warning_of_its_requirement(kit, libs, tmp_path):
    r, results = results_of(kit, libs, tmp_path, "nodevice", "--case", "producer/__dlpack_device__",
                            "--case", "producer/layout/contiguous/max_version=1.0")
    by = {x["case"]: x for x in results}
    device = by["producer/__dlpack_device__"]
    assert (device["verdict"], device["spec"], device["strength"]) == ("warn", "dlpack-device", "should")
    assert "__dlpack_device__() raised ValueError: this array has no device" in device["message"]
    assert by["producer/layout/contiguous/max_version=1.0"]["verdict"] == "pass"
    assert r.returncode == 0, r.stdout + r.stderr


def test_a_check_that_cannot_run_is_the_kit_s_error_not_the_library_s_failure(kit, libs, tmp_path):
    r, results = results_of(kit, libs, tmp_path, "kiterror", "--case", "consumer/versioned/contiguous")
    (x,) = results
    assert (x["verdict"], x["spec"]) == ("error", None)
    assert "NameError: name 'no_such_reader' is not defined" in x["message"], x["message"]
    assert "NameError" in x["traceback"]
    assert r.returncode == 3, r.stdout + r.stderr
    assert "KIT ERROR NameError" in r.stdout and "not the library's fault" in r.stdout
    assert "traceback:" in r.stdout and "reproducer (consumer/versioned/contiguous):" in r.stdout


def test_a_consumer_that_does_not_rename_the_capsule_is_warned_in_true_words(kit, libs, tmp_path):
    r, results = results_of(kit, libs, tmp_path, "unrenamed", "--case", "consumer/versioned/contiguous")
    (x,) = results
    assert (x["verdict"], x["spec"]) == ("warn", "consumer-rename"), x
    assert "left the capsule named 'dltensor_versioned'" in x["message"]
    assert "calls it again" not in x["message"]
    assert "It does so by renaming the capsule" in x["requirement"]
    r, results = results_of(kit, libs, tmp_path, "refuser", "--case", "consumer/versioned/contiguous")
    (x,) = results
    assert (x["verdict"], x["spec"]) == ("fail", "consumer-deleter-once"), x
    assert "never renamed the capsule, yet called the deleter once" in x["message"]
    assert "the capsule's destructor, which calls the deleter of an unrenamed capsule" in x["message"]


def test_a_capsule_without_destructor_taken_without_a_rename_is_the_same_warning(kit, libs, tmp_path):
    """nanobind (and mlx through it) on a capsule that has no destructor:
    nothing to clear, the deleter called once, the name kept. The same open
    point as with a destructor, so the same warning, not a failure."""
    r, results = results_of(kit, libs, tmp_path, "unrenamed", "--case", "a-capsule-without-destructor")
    assert len(results) == 2
    for x in results:
        assert (x["verdict"], x["spec"]) == ("warn", "consumer-rename"), x
        assert "which had no destructor" in x["message"], x["message"]


def test_a_crash_reading_memory_the_kit_only_names_is_not_judged(kit, libs, tmp_path):
    """A consumer that copies reads a valid corpus tensor's elements, which
    lie at addresses the kit has no memory at (data 4096): it dies there,
    and that is a skip saying why, not a crash of the library's."""
    r, results = results_of(kit, libs, tmp_path, "unrenamed", "--case", "consumer/corpus/uint8-2-elements-2^62-apart")
    (x,) = results
    assert x["verdict"] == "skip", x
    assert "SIGSEGV" in x["message"] and "the kit has no memory at (data 4096" in x["message"], x["message"]


def test_one_design_flaw_is_one_entry_and_q_fits_on_a_screen(kit, libs, tmp_path):
    r, results = results_of(kit, libs, tmp_path, "flipped", "--case", "consumer/versioned/", "-q")
    assert r.returncode == 1
    failed = [x for x in results if x["verdict"] == "fail"]
    assert len(failed) > 10 and {x["spec"] for x in failed} == {"consumer-values"}
    out = r.stdout
    assert out.count("FAIL consumer-values") == 1
    assert f"FAIL consumer-values: {len(failed)} cases  [must]" in out
    assert "(and " in out and out.count("reproducer (") == 1
    assert len(out.splitlines()) <= 40, out
    assert "WARN" not in out, "-q prints the broken requirements only"
    full = kit_run(kit, libs, "flipped", "--case", "consumer/versioned/")
    assert "WARN " in full.stdout


def test_the_markdown_report_is_fit_for_an_issue(kit, libs, tmp_path):
    md = tmp_path / "report.md"
    r = kit_run(kit, libs, "flipped", "--case", "consumer/versioned/", "--markdown", str(md))
    assert r.returncode == 1
    text = md.read_text()
    assert text.startswith("## DLPack conformance of flipped")
    assert "### 1. `consumer-values`:" in text
    assert "**Rule** (must: required by the text):" in text
    assert "**Where it is written:** DLPack C header (dlpack.h), DLTensor data, byte_offset and strides" in text
    assert "**What flipped did** (`consumer/versioned/" in text
    assert "```python\nimport flipped as xp\n" in text
    assert "<details><summary>" in text


def test_crashes_on_malformed_tensors_are_their_own_class_and_one_flag_decides(kit, libs, tmp_path):
    adapter = tmp_path / "malformed_crash_adapter.py"
    adapter.write_text(
        "from dlpack_conformance.adapters import NumPy\n\n"
        "class Crashing(NumPy):\n"
        "    imports = ('import ctypes',)\n"
        "    def from_dlpack(self, producer):\n"
        "        return (f'(ctypes.string_at(0) if {producer}.managed.dl_tensor.ndim < 0 '\n"
        "                f'else xp.from_dlpack({producer}))')\n\n"
        "ADAPTER = Crashing()\n")
    r, results = results_of(kit, libs, tmp_path, str(adapter), "--case", "consumer/corpus/ndim--1",
                            "--case", "consumer/versioned/contiguous")
    by = {x["case"]: x for x in results}
    crashed = [x for x in results if x["verdict"] == "crash"]
    assert crashed and all(x["spec"] == "crash-malformed" and x["malformed"] for x in crashed), results
    assert by["consumer/versioned/contiguous"]["verdict"] == "pass"
    assert r.returncode == 1
    assert "CRASH crash-malformed" in r.stdout and "[must, the kit's policy]" in r.stdout
    r, results = results_of(kit, libs, tmp_path, str(adapter), "--case", "consumer/corpus/ndim--1",
                            "--case", "consumer/versioned/contiguous", "--malformed-crashes", "report")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "CRASH crash-malformed" in r.stdout and "not failing the run" in r.stdout


def test_a_report_cut_short_by_head_ends_quietly(kit, libs):
    env = dict(os.environ, PYTHONPATH=str(libs))
    for args in (["numpy", "--list"], [str(libs / "flipped_adapter.py"), "--case", "consumer/versioned/"]):
        r = subprocess.run(" ".join([sys.executable, "-m", "dlpack_conformance", *args]) + " | head -2",
                           shell=True, cwd=kit, env=env, capture_output=True, text=True, timeout=300)
        assert len(r.stdout.splitlines()) == 2
        assert "Traceback" not in r.stderr and "BrokenPipeError" not in r.stderr, r.stderr


def test_an_adapter_written_against_the_old_interface_still_loads(kit, libs, tmp_path):
    """sides and ndims are additions: an adapter without them is two-sided
    and makes any shape, as before."""
    adapter = tmp_path / "old_adapter.py"
    adapter.write_text(textwrap.dedent("""
        from dlpack_conformance import Adapter
        from dlpack_conformance.adapters import ViaNumPy

        class Old(ViaNumPy):
            module = "numpy"
            lacks = frozenset({"negative-step"})
            def make_readonly(self, x):
                return f"{x}.flags.writeable = False"
            def asarray(self, values, dtype):
                return f"numpy.asarray({values!r}, dtype=numpy.{dtype})"

        ADAPTER = Old()
        assert isinstance(ADAPTER, Adapter)
    """))
    r, results = results_of(kit, libs, tmp_path, str(adapter), "--case", "producer/layout/",
                            "--case", "consumer/versioned/contiguous")
    assert r.returncode in (0, 1), r.stderr
    assert {x["side"] for x in results if x["verdict"] == "pass"} == {"producer", "consumer"}
    bad = tmp_path / "bad_adapter.py"
    bad.write_text("from dlpack_conformance import Adapter\nclass A(Adapter):\n    module = 'numpy'\n"
                   "    sides = 'producer'\nADAPTER = A()\n")
    r = kit_run(kit, libs, str(bad))
    assert r.returncode == 2 and "the adapter's sides must be" in r.stderr


def test_an_adapter_s_lacks_is_checked_and_read_only_follows_make_readonly(kit, libs, tmp_path):
    """lacks set without "readonly" by an adapter that cannot make a
    read-only array: it has no read-only cases (they crashed the run with a
    TypeError), as with lacks left out; a word the kit does not know is a bad adapter file, exit 2."""
    adapter = tmp_path / "lacks_adapter.py"
    adapter.write_text("from dlpack_conformance import Adapter\nclass A(Adapter):\n    module = 'numpy'\n"
                       "    lacks = frozenset({'negative-step'})\nADAPTER = A()\n")
    r, results = results_of(kit, libs, tmp_path, str(adapter), "--case", "producer/")
    assert r.returncode in (0, 1), r.stderr
    assert results and not [x for x in results if x["case"].startswith("producer/read-only/")]
    adapter.write_text("from dlpack_conformance import Adapter\nclass A(Adapter):\n    module = 'numpy'\n"
                       "    lacks = frozenset({'negativ-step'})\nADAPTER = A()\n")
    r = kit_run(kit, libs, str(adapter))
    assert r.returncode == 2
    assert "the adapter's lacks names 'negativ-step', which the kit does not know: lacks is a set of " \
           "broadcast, keywords, negative-step, readonly" in r.stderr
