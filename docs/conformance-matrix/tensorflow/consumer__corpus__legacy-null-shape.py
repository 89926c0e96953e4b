# tensorflow 2.21.0: consumer/corpus/legacy-null-shape (crash)
# requires: a library answers every input, malformed ones too, with a result or an exception: it does not kill or hang the process that called it.
# source: the kit's policy (no DLPack text is about crashes)
# got: the process died of SIGSEGV while running this case; its last words: I0000 00:00:1795640729.791630    2349 port.cc:153] oneDNN custom operations are on. You may see slightly different numerical results due to floating-point round-off errors from different computation orders. To turn them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`. | I0000 00:00:1795640730.005432    2349 cpu_feature_guard.cc:227] This TensorFlow binary is optimized to use available CPU instructions in performance-critical operations. | To enable the following instructions: AVX2 AVX512F AVX512_VNNI AVX512_BF16 FMA, in other operations, rebuild TensorFlow with the appropriate compiler flags. | WARNING: All log messages before absl::InitializeLog() is called are written to STDERR | I0000 00:00:1795640731.865723    2349 port.cc:153] oneDNN custom operations are on. You may see slightly different numerical results due to floating-point round-off errors from different computation orders. To turn them off, set the environment variable `TF_ENABLE_ONEDNN_OPTS=0`. | E0000 00:00:1795640732.164011    2349 util.cc:131] oneDNN supports DT_HALF only on platforms with AVX-512. Falling back to the default Eigen-based implementation if present.
# Run from the kit's directory (dlgen -lang conformance -out DIR; cd DIR/conformance).
import tensorflow as xp
from dlpack_conformance import reference
producer = reference.Producer(versioned=False, flags=0, device=(1, 0), dtype=(2, 32, 1), shape=None, strides=(3, 1), byte_offset=0, data='buffer', buffer_bytes=24, ndim=2)
try:
    y = xp.experimental.dlpack.from_dlpack(producer.__dlpack__())
except Exception as error:
    reference.refused(error, 'ok', producer)
reference.accepted(producer, y, 'consumer-malformed')
