"""The one way the Python benchmarks compare a candidate with its peer.

Every group times its peer and candidates in turn, round after round, the
order rotating each round, so that a slow moment of the machine touches all
of them alike; a candidate's figure is the median over rounds of its time
divided by the peer's time in the same round, and the spread is the range
of the middle half of those ratios (quartiles). compare prints them as a
table and returns them for bench/plot.py to draw.
"""
import os
import statistics
import timeit

from plot import Group, Ratio

ROUNDS = int(os.environ.get("DLGEN_BENCH_ROUNDS", "41"))
NUMBER = int(os.environ.get("DLGEN_BENCH_NUMBER", "2000"))


def compare(title, peer, candidates):
    """Times peer and candidates, each a (label, fn), interleaved over ROUNDS;
    prints them and returns them as a plot.Group."""
    entries = [peer] + candidates
    for _, fn in entries:
        timeit.timeit(fn, number=NUMBER)  # warm up
    times = {label: [] for label, _ in entries}
    for r in range(ROUNDS):
        k = r % len(entries)
        for label, fn in entries[k:] + entries[:k]:
            times[label].append(timeit.timeit(fn, number=NUMBER) / NUMBER)
    peer_times = times[peer[0]]
    print(title)
    peer_ns = statistics.median(peer_times) * 1e9
    print(f"  {peer[0] + '  [peer]':52s} {peer_ns:7.0f} ns   1.00x")
    ratios = []
    for label, _ in candidates:
        q1, med, q3 = statistics.quantiles(sorted(t / p for t, p in zip(times[label], peer_times)), n=4)
        ns = statistics.median(times[label]) * 1e9
        print(f"  {label:52s} {ns:7.0f} ns  {med:5.2f}x  (middle half {q1:.2f}x to {q3:.2f}x)")
        ratios.append(Ratio(label, ns, med, q1, q3))
    return Group(title.rstrip(":"), peer[0], peer_ns, ratios)


class DunderOnly:
    """The same object, reachable through __dlpack__ alone (no exchange API)."""

    def __init__(self, inner):
        self.inner = inner

    def __dlpack__(self, **kwargs):
        return self.inner.__dlpack__(**kwargs)

    def __dlpack_device__(self):
        return self.inner.__dlpack_device__()
