# Typing stub of dlpack_cython.Tensor and to_type: dlgen appends it to
# dlpack_cython.pyi after the generated declarations and shared.pyi, whose
# _TensorAPI holds what both modules' Tensor have. The generated part declares
# _ReleaseAttributes, Tensor's attributes whose names vary by release (the C
# exchange API's, from DLPack 1.2), a base class of the stub only, as the
# static part cannot name them.
import typing

@typing.final
class Tensor(_ReleaseAttributes, _TensorAPI):
    def __init__(self, *args: typing.Any, **kwargs: typing.Any) -> None: ...

def to_type(x: typing.Any, cls: type, /) -> typing.Any: ...
