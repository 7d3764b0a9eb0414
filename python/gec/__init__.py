"""GraphEngine (gec) for Python: compile ONNX models and run them.

    import gec
    sess = gec.Session("model.onnx", threads=2)      # compiled in memory, or a .gom
    outputs = sess.run(None, {"input": x})           # list of numpy arrays

The surface follows onnxruntime.InferenceSession (get_inputs(), get_outputs(),
run(output_names, input_feed)), so ONNX Runtime code ports by changing the
import and the constructor. Also:

- gec.compile(model, opt_level=2, input_shapes=...) -> gec.CompiledModel
  (.save(path), .report, bytes(m)), accepted by gec.Session.
- gec.bench(model, ...) / gec.profile(model, ...) -> the dicts `gec bench
  --json` / `gec profile --json` print.
- gec.torch.compile(module, example_inputs) -> a callable on torch tensors.
- gec.openmp_wait_policy(): how idle threads wait (OpenMP's environment,
  read when OpenMP starts: set OMP_WAIT_POLICY=PASSIVE before importing gec
  or torch for the least CPU use).

Errors are gec.GecError subclasses (gec.InvalidArgument, gec.InvalidModel,
gec.Unsupported, gec.CorruptFile, gec.IoError, gec.InternalError) carrying
gec's error code (.code, a gec.ErrorCode) and message.
"""

from .errors import (  # noqa: F401  (re-exported)
    CorruptFile,
    ErrorCode,
    GecError,
    InternalError,
    InvalidArgument,
    InvalidModel,
    IoError,
    Unsupported,
)
from ._nodearg import NodeArg  # noqa: F401
from ._gec import openmp_wait_policy, version  # noqa: F401
from ._api import CompiledModel, Session, bench, compile, profile  # noqa: F401

__version__ = version()

__all__ = [
    "compile", "Session", "CompiledModel", "NodeArg", "bench", "profile", "version", "openmp_wait_policy",
    "GecError", "ErrorCode", "InvalidArgument", "InvalidModel", "Unsupported", "CorruptFile", "IoError",
    "InternalError",
]


def __getattr__(name):
    # gec.torch imports torch (seconds): loaded on first use of gec.torch only.
    if name == "torch":
        import importlib

        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'gec' has no attribute '{name}'")
