"""The kit's tests: dlgen's test harness (tests/harness.py) gives them their
fixtures, paths and account of skips, as it does the generated modules'."""
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))), "tests"))

import harness  # noqa: E402


def pytest_configure(config):
    harness.plug_into(config)
