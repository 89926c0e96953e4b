"""Rows 1 and 2 of a 3x3 matrix, 12 bytes into the buffer (byte_offset 12),
imported by Warp, which reads from the start of the buffer instead."""
import warp

warp.config.quiet = True
warp.init()
from handmade import Buffer

rows = Buffer([4.0, 5.0, 6.0, 7.0, 8.0, 9.0], shape=(2, 3), byte_offset=12)
y = warp.from_dlpack(rows)
print(y.numpy().tolist())
print("last line")
