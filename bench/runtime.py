"""Runs the dltensor runtime and copy-engine benchmarks and prints each result next
to the peer it is judged against, measured in the same run.

    .venv/bin/python bench/runtime.py       (needs go and numpy)

Goals: export + release <= 300 ns with 0 allocations; a 1 GiB tensor exchanged in
about the time of a 1 KiB one; the contiguous copy >= 0.9x Go's copy (the Go
benchmark alternates the two in every iteration and reports the median ratio and
quartiles); the 4096x4096 float32 transpose made contiguous >= 4x NumPy's
np.ascontiguousarray(a.T): the Go benchmark (allocate, then copy) and NumPy take
turns for ROUNDS rounds, the order alternating, and the figure is the median of
the per-round ratios with the middle half of them. Strided copies at the memory
limit: each layout of BenchmarkStridedVsContiguous (2-d transposes of every item
size, 3-d permutations, a slice with a step, a reversed array, broadcasts) is
copied into row-major memory, alternating with the engine's contiguous copy of
the same 64 MiB in STRIDED_ITERATIONS iterations, and the figure is the median
of the per-iteration ratios of their times with the middle half of them (goal:
the 4096x4096 float32 transpose within 2x, any layout within 3x). All three are
drawn as GB/s in docs/bench/copy-engine.svg (bench/plot.py).

It also prints the benchmark that decided how dltensor checks an import: Go's
checker (the peer) against the C helper header's through cgo, on the same
tensors, CHECK_ROUNDS alternating rounds (docs/rules.md says what it decided).
"""
import os
import re
import statistics
import subprocess
import tempfile
import timeit

import numpy as np
import plot

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ROUNDS = int(os.environ.get("DLGEN_BENCH_ROUNDS", "15"))
STRIDED_ITERATIONS = int(os.environ.get("DLGEN_BENCH_STRIDED_ITERATIONS", "21"))  # BenchmarkStridedVsContiguous
CHECK_ROUNDS = int(os.environ.get("DLGEN_BENCH_CHECK_ROUNDS", "201"))  # BenchmarkImportCheckCVsGo
COPY_BYTES = 64 << 20  # BenchmarkContiguousCopyVsGo
TRANSPOSE_N = 4096  # BenchmarkTranspose2D, float32
LINE = re.compile(r"^(Benchmark\w+)-\d+\s+\d+\s+([\d.]+) ns/op(?:\s+[\d.]+ MB/s)?(?:\s+(\d+) B/op\s+(\d+) allocs/op)?")
METRIC = re.compile(r"(-?[\d.]+(?:e[+-]?\d+)?) ([\w-]+)")


def go_bench(pkg, pattern, rounds=7):
    """The best of several interleaved rounds of each benchmark: compared
    benchmarks see the same machine conditions, and noise only adds time."""
    results = {}
    for _ in range(rounds):
        out = subprocess.run(["go", "test", "-run=^$", "-bench=" + pattern, "-benchmem", "-benchtime=0.3s", pkg],
                             cwd=ROOT, check=True, capture_output=True, text=True).stdout
        for line in out.splitlines():
            m = LINE.match(line)
            if m:
                ns, allocs = float(m.group(2)), int(m.group(4) or 0)
                results[m.group(1)] = min(results.get(m.group(1), (ns, allocs)), (ns, allocs))
    return results


def import_check():
    """Prints BenchmarkImportCheckCVsGo: per tensor, Go's check and C's
    through cgo, alternating in every round, and C's time over Go's."""
    out = subprocess.run(["go", "test", "-run=^$", "-bench=^BenchmarkImportCheckCVsGo$", f"-benchtime={CHECK_ROUNDS}x",
                          "./runtime/dltensor"], cwd=ROOT, check=True, capture_output=True, text=True).stdout
    print(f"import check, the C helper through cgo against Go's [peer], {CHECK_ROUNDS} alternating rounds:")
    for line in out.splitlines():
        if line.startswith("BenchmarkImportCheckCVsGo/"):
            name = line.split()[0].split("/", 1)[1].rsplit("-", 1)[0]
            m = {unit: float(v) for v, unit in METRIC.findall(line)}
            print(f"  {name:26s} Go {m['go-ns']:5.0f} ns  C {m['c-ns']:5.0f} ns ({m['c-extra-ns']:+4.0f} ns)  "
                  f"{m['c-vs-go']:.2f}x Go's time (middle half {m['c-vs-go-q1']:.2f}x to {m['c-vs-go-q3']:.2f}x)")


def run_binary(binary, bench, benchtime):
    """One run of one benchmark of a compiled test binary: its result lines,
    one for each sub-benchmark."""
    out = subprocess.run([binary, "-test.run=^$", f"-test.bench=^{bench}$", f"-test.benchtime={benchtime}"],
                         cwd=os.path.join(ROOT, "runtime", "devices"), check=True, capture_output=True, text=True).stdout
    return [line for line in out.splitlines() if line.startswith(bench)]


def strided_copies(binary):
    """Prints BenchmarkStridedVsContiguous: each layout's time over the
    contiguous copy's, and returns (layout, metrics) pairs."""
    print(f"strided copies made row-major against the engine's contiguous copy of 64 MiB [peer], "
          f"{STRIDED_ITERATIONS} alternating iterations each (goal: transpose 4096^2 float32 <= 2x, any <= 3x):")
    results = []
    for line in run_binary(binary, "BenchmarkStridedVsContiguous", f"{STRIDED_ITERATIONS}x"):
        name = line.split()[0].split("/", 1)[1].rsplit("-", 1)[0]
        m = {unit: float(v) for v, unit in METRIC.findall(line)}
        print(f"  {name:36s} {m['strided-ns'] / 1e6:6.2f} ms vs {m['contiguous-ns'] / 1e6:5.2f} ms: "
              f"{m['ratio']:.2f}x the time (middle half {m['ratio-q1']:.2f}x to {m['ratio-q3']:.2f}x)")
        results.append((name, m))
    return results


def main():
    rt = go_bench("./runtime/dltensor", "^Benchmark(ExportRelease|Exchange1KiB|Exchange1GiB)$")
    ns, allocs = rt["BenchmarkExportRelease"]
    print(f"export + release round trip       {ns:10.0f} ns  {allocs} allocs  (goal <= 300 ns, 0 allocs)")
    small, big = rt["BenchmarkExchange1KiB"][0], rt["BenchmarkExchange1GiB"][0]
    print(f"exchange 1 GiB vs 1 KiB           {big:10.0f} ns vs {small:.0f} ns: {big / small:.2f}x (zero-copy: about 1x)")
    import_check()

    with tempfile.TemporaryDirectory() as tmp:
        binary = os.path.join(tmp, "devices.test")
        subprocess.run(["go", "test", "-c", "-o", binary, "./runtime/devices"], cwd=ROOT, check=True)

        m = {name: float(v) for v, name in METRIC.findall(run_binary(binary, "BenchmarkContiguousCopyVsGo", "41x")[0])}
        copy_speed = (m["speed-vs-go"], m["speed-q1"], m["speed-q3"])
        print(f"contiguous copy 64 MiB            {m['engine-ns'] / 1e6:10.2f} ms vs Go copy {m['go-ns'] / 1e6:.2f} ms: "
              f"{speed_text('', *copy_speed)}; goal >= 0.9x)")

        a = np.arange(TRANSPOSE_N * TRANSPOSE_N, dtype=np.float32).reshape(TRANSPOSE_N, TRANSPOSE_N)
        number = 5
        go_times, numpy_times = [], []
        for r in range(ROUNDS):
            def go():
                go_times.append(float(LINE.match(run_binary(binary, "BenchmarkTranspose2D", f"{number}x")[0]).group(2)))

            def numpy():
                numpy_times.append(timeit.timeit(lambda: np.ascontiguousarray(a.T), number=number) / number * 1e9)
            for step in ((go, numpy) if r % 2 == 0 else (numpy, go)):
                step()
        q1, med, q3 = statistics.quantiles(sorted(p / g for p, g in zip(numpy_times, go_times)), n=4)
        transpose_speed = (med, q1, q3)
        print(f"transposed 4096^2 float32 copy    {statistics.median(go_times) / 1e6:10.2f} ms vs NumPy "
              f"{statistics.median(numpy_times) / 1e6:.2f} ms: {speed_text('', *transpose_speed)}; goal >= 4x; {ROUNDS} rounds)")
        strided = strided_copies(binary)

    plot.throughput(plot.out("copy-engine.svg"), "Copy engine throughput (make bench-runtime)", [
        plot.Panel("Contiguous copy of 64 MiB (goal: at least 0.9x Go's speed)", [
            rate("devices.Copy", COPY_BYTES, m["engine-ns-q1"], m["engine-ns"], m["engine-ns-q3"]),
            rate("Go copy (memmove)", COPY_BYTES, m["go-ns-q1"], m["go-ns"], m["go-ns-q3"]),
        ], "devices.Copy at " + speed_text("Go's ", *copy_speed) + "; 41 alternating iterations)"),
        plot.Panel(f"A {TRANSPOSE_N}x{TRANSPOSE_N} float32 transpose made contiguous, allocate then copy "
                   "(goal: at least 4x NumPy's speed)", [
            rate("devices.Copy into new memory", 4 * TRANSPOSE_N ** 2, *statistics.quantiles(go_times, n=4)),
            rate("np.ascontiguousarray(a.T)", 4 * TRANSPOSE_N ** 2, *statistics.quantiles(numpy_times, n=4)),
        ], "devices.Copy at " + speed_text("NumPy's ", *transpose_speed) + f"; {ROUNDS} alternating rounds)"),
        plot.Panel("Strided copies of 64 MiB made row-major against a contiguous copy of 64 MiB "
                   "(goal: the float32 transpose within 2x its time, any layout within 3x)", [
            rate(f"{name}: {m['ratio']:.2f}x ({m['ratio-q1']:.2f}x to {m['ratio-q3']:.2f}x)", m["bytes"],
                 m["strided-ns-q1"], m["strided-ns"], m["strided-ns-q3"]) for name, m in strided
        ] + [rate("contiguous copy (devices.Copy)", COPY_BYTES, *(statistics.median(m[k] for _, m in strided)
                                                                 for k in ("contiguous-ns-q1", "contiguous-ns", "contiguous-ns-q3")))],
                   f"each layout's time over the contiguous copy's, median (middle half) of {STRIDED_ITERATIONS} "
                   "alternating iterations; the contiguous bar: the median of each layout's quartiles"),
    ], plot.machine())


def speed_text(whose, median, q1, q3):
    """A speed ratio as the tables print it, its parenthesis left open."""
    return f"{median:.2f}x {whose}speed (middle half {q1:.2f}x to {q3:.2f}x"


def rate(label, nbytes, q1_ns, median_ns, q3_ns):
    """Throughput in GB/s from time quartiles: the fastest quarter of times is
    the upper quarter of rates."""
    return plot.Rate(label, nbytes / median_ns, nbytes / q3_ns, nbytes / q1_ns)


if __name__ == "__main__":
    main()
