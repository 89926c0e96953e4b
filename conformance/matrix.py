"""The public conformance matrix: runs dlgen's conformance kit (dlgen -lang
conformance) against every library the test suite installs, each in its own
venv, and with --write records the results in docs/conformance-matrix.json,
docs/conformance-matrix.md, docs/conformance-matrix.svg and one reproducer
per failing case under docs/conformance-matrix/LIBRARY/, beside the kit's
Markdown report as issue.md where the library breaks a requirement a text
states. conformance/tests/test_conformance_kit.py runs the same libraries and
fails when a verdict differs from the recorded one.

    .venv/bin/python conformance/matrix.py --write           # after make deps
    .venv/bin/python conformance/matrix.py numpy             # one library, compared
    .venv/bin/python conformance/matrix.py --write mlx warp  # these recorded anew, the others kept"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
MATRIX = os.path.join(ROOT, "docs", "conformance-matrix.json")
REPRODUCERS = os.path.join(ROOT, "docs", "conformance-matrix")


def _dpnp_env():
    venv = os.path.join(ROOT, ".venv-dpnp")
    return {"OCL_ICD_FILENAMES": os.path.join(venv, "lib", "libintelocl.so"),
            "OCL_ICD_VENDORS": os.path.join(venv, "etc", "OpenCL", "vendors")}


# library: (venv, distribution whose version is recorded, extra environment)
LIBRARIES = {
    "numpy": (".venv", "numpy", {}),
    "torch": (".venv", "torch", {}),
    "jax": (".venv", "jax", {}),
    "tensorflow": (".venv-kit", "tensorflow-cpu", {}),
    "paddle": (".venv-kit", "paddlepaddle", {}),
    "mxnet": (".venv-mxnet", "mxnet", {}),
    "dpnp": (".venv-dpnp", "dpnp", None),
    "tvm_ffi": (".venv", "apache-tvm-ffi", {}),
    "array_api_strict": (".venv", "array-api-strict", {}),
    "pyarrow": (".venv-libs", "pyarrow", {}),
    "pyarrow.Tensor": (".venv-libs", "pyarrow", {}),
    "mlx": (".venv-libs", "mlx", {}),
    "warp": (".venv-libs", "warp-lang", {}),
    "open3d": (".venv-libs", "open3d-cpu", {}),
    "onnxruntime": (".venv-libs", "onnxruntime", {}),
    "ndonnx": (".venv-libs", "ndonnx", {}),
    # nanobind's nb::ndarray, in the small extension tests/nanobind builds
    "dlpack_nanobind": (".venv-libs", "nanobind", {}),
    "dlpack_ctypes": (".venv", None, {}),
    "dlpack_cython": (".venv", None, {}),
    # older releases the built-in adapters must still drive (issue 41)
    "numpy-1.26": (".venv-oldlibs", "numpy", {}),
    "jax-0.4": (".venv-oldlibs", "jax", {}),
}
# A row that is an older release of a library: the library the kit is named.
OLDER_RELEASES = {"numpy-1.26": "numpy", "jax-0.4": "jax"}
DLGEN_MODULES = ("dlpack_ctypes", "dlpack_cython")
NANOBIND_SOURCE = os.path.join(ROOT, "tests", "nanobind", "dlpack_nanobind.cpp")


def python_of(library):
    return os.path.join(ROOT, LIBRARIES[library][0], "bin", "python")


def make_kit(out):
    """Writes the kit of the newest release under out/conformance."""
    subprocess.run(["go", "run", "./cmd/dlgen", "-lang", "conformance", "-out", out], cwd=ROOT, check=True)
    return os.path.join(out, "conformance")


def run(library, kit, pythonpath=(), case_by_case=False):
    """The kit's JSON results for library, its version and the seconds; its
    Markdown report (--markdown) is left in kit/results-LIBRARY.md. The
    matrix records a whole run (every case in one worker); case_by_case runs
    each case in a process of its own, forked after the library's import."""
    _venv, dist, env = LIBRARIES[library]
    env = dict(os.environ, **(_dpnp_env() if env is None else env))
    if case_by_case:
        env["DLPACK_CONFORMANCE_ISOLATE"] = "1"
    if pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(pythonpath)
    out = os.path.join(kit, f"results-{library}.json")
    start = time.monotonic()
    command = [python_of(library), "-m", "dlpack_conformance", OLDER_RELEASES.get(library, library),
               "--json", out, "-q", "--markdown", markdown_of(kit, library)]
    r = subprocess.run(command, cwd=kit, env=env, capture_output=True, text=True, check=False)
    seconds = time.monotonic() - start
    if r.returncode not in (0, 1, 3):  # 3: nothing fails, the kit could not judge some cases
        raise RuntimeError(
            f"the kit could not run against {library} (exit {r.returncode}):\n{r.stderr}{r.stdout}"
        )
    with open(out) as f:
        results = json.load(f)
    version = None
    if dist:
        ask = f"import importlib.metadata as m; print(m.version({dist!r}))"
        version = subprocess.run([python_of(library), "-c", ask],
                                 capture_output=True, text=True, env=env, check=True).stdout.strip()
    return results, version, seconds


def markdown_of(kit, library):
    return os.path.join(kit, f"results-{library}.md")


def load():
    with open(MATRIX) as f:
        return json.load(f)


# Libraries of the matrix whose issue text names something a reader needs
# beyond the kit's report.
ISSUE_NOTES = {
    "dlpack_nanobind": (
        "`dlpack_nanobind` is a small nanobind extension (dlgen's tests/nanobind/dlpack_nanobind.cpp): its "
        "`from_dlpack(x)` takes `nb::ndarray<>` (`nb::ndarray<nb::ro>` for read-only memory) "
        "and returns a view "
        "of it as `nb::ndarray<nb::array_api>`, so every import and export below is nanobind's own code."
    ),
    "mlx": "mlx imports through nanobind's `nb::ndarray` (see nanobind's report, which breaks the same rules).",
    "pyarrow.Tensor": (
        "`pyarrow.Tensor.from_dlpack` asks `__dlpack__(max_version=...)` and then reads the capsule as a "
        "versioned one; a producer that answers with a legacy `dltensor` capsule, as the array API allows "
        "(\"This method may return a capsule of version max_version (recommended if it does support that), "
        "or of a different version. This means the consumer must verify the version even when max_version "
        "is passed.\", array.__dlpack__), is refused with `PyCapsule_GetPointer called with incorrect "
        "name`: JAX's arrays, which export legacy capsules only, among them."
    ),
}


def files_an_issue(results):
    """Whether a run breaks a requirement a text states (a `must` that is
    not the kit's own policy): a bug to report, with the kit's Markdown."""
    return any(r["verdict"] in ("fail", "crash") and r["basis"] == "must"
               and not (r["spec"] or "").endswith("-exists") for r in results)


def issue_path(library):
    return os.path.join(REPRODUCERS, library, "issue.md")


def verdicts(results):
    """Every case's verdict but pass's: a case the matrix does not list
    passed (or did not exist)."""
    return {r["case"]: r["verdict"] for r in results if r["verdict"] != "pass"}


def differences(recorded, results):
    """The cases whose verdict differs from the recorded one, as lines."""
    now = {r["case"]: r["verdict"] for r in results}
    before = recorded["verdicts"]
    lines = []
    for case in sorted(set(now) | set(before)):
        was = before.get(case, "pass" if case in now else None)
        if now.get(case) != was:
            lines.append(f"{case}: recorded {was}, now {now.get(case)}")
    if len(now) != recorded["cases"]:
        lines.append(f"{len(now)} cases, recorded {recorded['cases']}")
    return lines


def record(results, version, seconds):
    """What the matrix keeps of one library's run: every verdict, and each
    failing case with its requirement, except that a missing side (every
    case of it fails producer-exists or consumer-exists) is one entry, its
    first case, with the count."""
    failures, missing = [], {}
    for r in results:
        if r["verdict"] not in ("fail", "crash"):
            continue
        if r["spec"] in missing:
            missing[r["spec"]]["cases"] += 1
            continue
        failures.append({k: r[k] for k in ("case", "verdict", "requirement", "source", "strength", "message")})
        if (r["spec"] or "").endswith("-exists"):
            missing[r["spec"]] = failures[-1]
            failures[-1]["cases"] = 1
    counts = {v: sum(r["verdict"] == v for r in results) for v in ORDER}
    return {"version": version, "cases": len(results), "seconds": round(seconds), "counts": counts,
            "verdicts": verdicts(results), "failures": failures}


ORDER = ("pass", "warn", "fail", "crash", "error", "skip", "xfail")


def write(got, kit):
    """Records the libraries run (got: library -> (results, version,
    seconds)) in the matrix, keeping the others as recorded, then writes the
    Markdown page, the SVG, one reproducer per failing case, and for a
    library that breaks a text's requirement the kit's Markdown report, the
    text of an issue to file (issue.md)."""
    matrix = load() if os.path.exists(MATRIX) else {}
    for library, (results, version, seconds) in got.items():
        matrix[library] = record(results, version, seconds)
        shutil.rmtree(os.path.join(REPRODUCERS, library), ignore_errors=True)
        if files_an_issue(results):
            os.makedirs(os.path.dirname(issue_path(library)), exist_ok=True)
            with open(markdown_of(kit, library)) as f:
                report = f.read().rstrip() + "\n"
            note = ISSUE_NOTES.get(library)
            with open(issue_path(library), "w") as f:
                f.write(report.replace("\n\n", f"\n\n{note}\n\n", 1) if note else report)
        kept = {f["case"] for f in matrix[library]["failures"]}
        for r in results:
            if r["case"] in kept:
                path = os.path.join(REPRODUCERS, library, r["case"].replace("/", "__") + ".py")
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "w") as f:
                    f.write(f"# {library} {version or ''}: {r['case']} ({r['verdict']})\n")
                    f.write(f"# requires: {r['requirement']}\n# source: {r['source']}\n")
                    f.write(f"# got: {r['message']}\n")
                    f.write("# Runs from any directory with the kit installed (pip install dlpack-conformance, "
                            "or DIR/conformance that dlgen -lang conformance -out DIR writes).\n")
                    f.write(r["reproducer"])
    matrix = {lib: matrix[lib] for lib in LIBRARIES if lib in matrix}
    with open(MATRIX, "w") as f:
        f.write(_json(matrix))
    _markdown(matrix)
    _svg(matrix)


def _json(value, indent=""):
    """value as JSON, keys sorted: a dict one key a line (a dict of counts on
    one line), a list one item a line, each item (a failure) whole on its
    line."""
    inner = indent + " "
    if isinstance(value, dict) and value and not all(isinstance(v, int) for v in value.values()):
        items = [f"{inner}{json.dumps(k)}: {_json(v, inner)}" for k, v in sorted(value.items())]
    elif isinstance(value, list) and value:
        items = [inner + json.dumps(v, sort_keys=True) for v in value]
    else:
        return json.dumps(value, sort_keys=True) + ("\n" if not indent else "")
    opening, closing = ("{", "}") if isinstance(value, dict) else ("[", "]")
    return opening + "\n" + ",\n".join(items) + "\n" + indent + closing + ("\n" if not indent else "")


def _markdown(matrix):
    lines = ["# DLPack conformance matrix", "",
             ("<!-- Written by conformance/matrix.py --write; conformance/tests/test_conformance_kit.py "
              "fails when a verdict changes. -->"), "",
             ("dlgen's conformance kit ([conformance-kit.md](conformance-kit.md)) run against the newest "
             f"release of each of the {len(set(LIBRARIES) - set(OLDER_RELEASES))} libraries the test suite "
             "installs, and older releases the built-in adapters must still drive "
             f"({', '.join(OLDER_RELEASES)}), on a CPU (Linux x86-64, "
             "no GPU). A failure breaks a requirement the "
             "DLPack or array-API text states; a warning breaks a recommendation or touches a point the text "
             "leaves open (the kit's output lists them). Each failure links to its reproducer."), "",
             "![the matrix](conformance-matrix.svg)", "",
             "| library | version | cases | seconds | " + " | ".join(ORDER) + " |",
             "|---|---|---|---|" + "---|" * len(ORDER)]
    for library, m in matrix.items():
        lines.append(f"| {library} | {m['version'] or 'this commit'} | {m['cases']} | {m['seconds']} | "
                     + " | ".join(str(m["counts"].get(v, 0)) for v in ORDER) + " |")
    lines += ["", ("Seconds: one run of every case (the imports, a fresh worker after each crash), "
                   "on the 2-core "
              "machine that recorded the page, while it did other work; `make bench-conformance` measures it "
              "alone."), "",
              ("Not run here: CuPy and PyTorch on CUDA. The machines that record this page have no GPU; "
              "`tests/python/test_devices.py` covers them where one is."), ""]
    for library, m in matrix.items():
        if not m["failures"]:
            continue
        lines += [f"## {library} {m['version'] or ''}", ""]
        if os.path.exists(issue_path(library)):
            link = f"[issue.md](conformance-matrix/{library}/issue.md)"
            lines += [f"An issue to file, the kit's report: {link}.", ""]
        lines += ["| case | verdict | requirement | source | got |", "|---|---|---|---|---|"]
        for r in m["failures"]:
            link = f"conformance-matrix/{library}/{r['case'].replace('/', '__')}.py"
            got = r["message"].replace("|", "\\|").replace("\n", " ")
            if len(got) > 200:
                got = got[:200] + "..."
            case = f"[{r['case']}]({link})"
            if r.get("cases", 1) > 1:  # a missing side: every case of it
                case += f" and the {r['cases'] - 1} other {r['case'].split('/')[0]} cases"
            lines.append(f"| {case} | {r['verdict']} | {r['requirement']} | {r['source']} | {got} |")
        lines.append("")
    with open(os.path.join(ROOT, "docs", "conformance-matrix.md"), "w") as f:
        f.write("\n".join(lines))


def _svg(matrix):
    """A stacked bar per library, verdicts by colour: plain SVG, written
    here so that it stays small and the same for the same matrix."""
    colours = [("pass", "#4c9a2a"), ("warn", "#e0b000"), ("skip", "#bbbbbb"), ("fail", "#d62728"),
               ("crash", "#7b1113")]
    libraries = list(matrix)
    scale, left, row = 1.4, 130, 24
    most = max(m["cases"] for m in matrix.values())
    width, height = left + int(most * scale) + 20, 40 + row * len(libraries)
    out = [(f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{height}" '
           'font-family="sans-serif" font-size="12">')]
    for i, (verdict, colour) in enumerate(colours):
        out.append(f'<rect x="{left + 90 * i}" y="6" width="10" height="10" fill="{colour}"/>'
                   f'<text x="{left + 90 * i + 14}" y="15">{verdict}</text>')
    for n, library in enumerate(libraries):
        y, x = 28 + row * n, left
        out.append(f'<text x="{left - 6}" y="{y + 14}" text-anchor="end">{library}</text>')
        for verdict, colour in colours:
            w = matrix[library]["counts"].get(verdict, 0) * scale
            if w:
                out.append(f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="18" fill="{colour}">'
                           f'<title>{library}: {matrix[library]["counts"][verdict]} {verdict}</title></rect>')
            x += w
    out.append("</svg>")
    with open(os.path.join(ROOT, "docs", "conformance-matrix.svg"), "w") as f:
        f.write("\n".join(out) + "\n")


def pythonpath_for(library, cython_dir=None):
    if library == "dlpack_ctypes":
        return [os.path.join(ROOT, "generated", "python")]
    if library == "dlpack_cython":
        return [cython_dir]
    if library == "dlpack_nanobind":
        return [build_nanobind()]
    return []


_NANOBIND_FACTS = """import json, os, sys, sysconfig, nanobind
print(json.dumps({"nanobind": nanobind.__version__, "include": nanobind.include_dir(),
                  "source": nanobind.source_dir(), "python": sysconfig.get_paths()["include"],
                  "suffix": sysconfig.get_config_var("EXT_SUFFIX"), "version": sys.version}))"""


def build_nanobind():
    """Builds tests/nanobind's extension with g++ against the nanobind of its
    venv (its single-file source, no CMake) and returns the directory holding
    it: .cache/nanobind/KEY, KEY a hash of the source, nanobind's version,
    the Python and the compiler, so that a build is reused until one changes."""
    import hashlib
    python = python_of("dlpack_nanobind")
    facts = json.loads(subprocess.run([python, "-c", _NANOBIND_FACTS], capture_output=True, text=True,
                                      check=True).stdout)
    compiler = subprocess.run(["g++", "--version"], capture_output=True, text=True, check=True).stdout
    with open(NANOBIND_SOURCE, "rb") as f:
        key = hashlib.sha256(f.read() + json.dumps([facts, compiler], sort_keys=True).encode()).hexdigest()[:16]
    out = os.path.join(ROOT, ".cache", "nanobind", key)
    module = os.path.join(out, "dlpack_nanobind" + facts["suffix"])
    if os.path.exists(module):
        return out
    os.makedirs(out, exist_ok=True)
    robin_map = os.path.join(os.path.dirname(facts["include"]), "ext", "robin_map", "include")
    subprocess.run(["g++", "-std=c++17", "-O1", "-shared", "-fPIC", "-fvisibility=hidden", "-Wall",
                    "-I", facts["include"], "-I", robin_map, "-I", facts["python"], NANOBIND_SOURCE,
                    os.path.join(facts["source"], "nb_combined.cpp"), "-o", module + ".part"], check=True)
    os.replace(module + ".part", module)
    return out


def build_cython():
    """dlpack_cython, built as dlgen's Python tests build it (tests/harness.py)."""
    sys.path.insert(0, os.path.join(ROOT, "tests"))
    from harness import CYTHON_DIR
    return CYTHON_DIR


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("libraries", nargs="*")
    parser.add_argument("--write", action="store_true")
    args = parser.parse_args()
    libraries = args.libraries or list(LIBRARIES)
    cython_dir = build_cython() if "dlpack_cython" in libraries else None
    with tempfile.TemporaryDirectory() as tmp:
        kit = make_kit(tmp)
        got = {}
        for library in libraries:
            got[library] = run(library, kit, pythonpath_for(library, cython_dir))
            results, version, seconds = got[library]
            print(f"{library} {version or ''}: {len(results)} cases in {seconds:.1f} s", flush=True)
        if args.write:
            write(got, kit)
            return 0
    recorded = load()
    status = 0
    for library, (results, _, _) in got.items():
        diff = differences(recorded[library], results)
        for line in diff:
            print(f"{library}: {line}")
        status |= bool(diff)
    return status


if __name__ == "__main__":
    sys.exit(main())
