"""The generated Python modules' tests: dlgen's test harness (tests/harness.py)
gives them their fixtures, paths and account of skips."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import harness  # noqa: E402


def pytest_configure(config):
    harness.plug_into(config)
