# Typing stub of dlpack_ctypes.Tensor: dlgen appends it to dlpack_ctypes.pyi
# after the generated declarations and shared.pyi, whose _TensorAPI holds
# what both modules' Tensor have.

class Tensor(_TensorAPI):
    def __init__(self) -> None: ...
    def __buffer__(self, flags: int) -> memoryview: ...
