"""bench/ctypes_profile.py reads the ctypes module's private names: it must
keep running as the module changes (one quick round here; make bench-python
runs it in full)."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_the_ctypes_profile_runs():
    env = dict(os.environ, DLGEN_BENCH_ROUNDS="1")
    out = subprocess.run([sys.executable, os.path.join(ROOT, "bench", "ctypes_profile.py")],
                         capture_output=True, text=True, env=env, check=False)
    assert out.returncode == 0, out.stderr
    assert "np.from_dlpack(dlpack_ctypes tensor), whole" in out.stdout
