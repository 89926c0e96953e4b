"""Memory a consumer has released comes back promptly, with the garbage
collector idle and however many other exports consumers hold: a loop
handing a fresh 1 MiB buffer to NumPy each time keeps a handful alive.
The ctypes module runs no code when a consumer is done (see
test_pending_error.py), so this is what its own next exports do."""
import ctypes
import gc

import numpy as np
import pytest

MIB = 1 << 20


class Buffer:
    """Memory a framework owns, counted while alive."""

    live = 0

    def __init__(self, size):
        self.memory = (ctypes.c_char * size)()
        Buffer.live += 1

    def __del__(self):
        Buffer.live -= 1


def export(dl, size=MIB):
    """A NumPy array over a new buffer, through from_pointer and DLPack."""
    b = Buffer(size)
    return np.from_dlpack(dl.from_pointer(ctypes.addressof(b.memory), (size,), "uint8", owner=b))


@pytest.fixture
def collector_idle():
    enabled = gc.isenabled()
    gc.collect()
    gc.disable()
    yield
    if enabled:
        gc.enable()
    gc.collect()


@pytest.mark.parametrize("long_lived", [0, 500])
def test_released_buffers_come_back_promptly(dl, collector_idle, long_lived):
    held = [export(dl, 16) for _ in range(long_lived)]  # consumers that keep theirs
    base = Buffer.live
    peak = 0
    a = None
    for _ in range(300):
        a = export(dl)  # the previous array dies after this export, when a is rebound
        a[0] = 1
        peak = max(peak, Buffer.live - base)
    assert peak <= 4, f"{peak} buffers alive where the loop holds 1 or 2"
    del a
    peak = 0
    for _ in range(300):
        a = export(dl)
        a[-1] = 1
        del a  # dies before the next export
        peak = max(peak, Buffer.live - base)
    assert peak <= 2, f"{peak} buffers alive where the loop holds 1"
    assert len(held) == long_lived and all(h.size == 16 for h in held)
    del held  # the long-lived ones come back too, in time: within as many exports as they lived
    for _ in range(2 * long_lived + 700):
        export(dl, 16)  # dies at once
    assert Buffer.live - base <= 1, "released long-lived exports are still held"
