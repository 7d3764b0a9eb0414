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

Errors are gec.GecError subclasses (gec.InvalidArgument, gec.InvalidModel,
gec.Unsupported, gec.CorruptFile, gec.IoError, gec.InternalError) carrying
gec's error code (.code, a gec.ErrorCode) and message.
"""

import json as _json

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
from ._gec import CompiledModel, NodeArg, Session, compile, version  # noqa: F401
from . import _gec

__version__ = version()

__all__ = [
    "compile", "Session", "CompiledModel", "NodeArg", "bench", "profile", "version",
    "GecError", "ErrorCode", "InvalidArgument", "InvalidModel", "Unsupported", "CorruptFile", "IoError",
    "InternalError",
]


def _session(model, threads, compile_options):
    if isinstance(model, Session):
        if compile_options:
            raise InvalidArgument("compile options apply to ONNX models; this gec.Session is loaded already",
                                  ErrorCode.INVALID_ARGUMENT)
        return model
    return Session(model, threads=threads, **compile_options)


def bench(model, inputs=None, *, warmup=10, iterations=50, threads=0, **compile_options):
    """Times a model as `gec bench --json` does and returns the same dict.

    Args:
        model: a gec.Session, or anything gec.Session accepts (a .gom or .onnx
            path, model bytes, a gec.CompiledModel); loaded (and compiled)
            here with `threads` and `compile_options` (opt_level,
            input_shapes, disabled_passes), and that time is load_ms.
        inputs (dict or None): {input name: numpy array}, as Session.run
            takes; None generates them from the declared types (dynamic dims
            set to 1, floats uniform in [0, 1), integers 0..9).
        warmup (int): untimed runs after the first run (>= 0).
        iterations (int): timed runs (>= 1).
        threads (int): intra-op threads when the model is loaded here
            (0 = all cores).

    Returns:
        dict with, in milliseconds, "min_ms", "median_ms", "p90_ms",
        "p99_ms", "max_ms" (per Session::run call, C++ steady clock),
        "first_run_ms", "load_ms"; "throughput_per_s" (1000 / median),
        "peak_rss_bytes" (of this whole process, interpreter included),
        "threads", "warmup", "iterations".

    Raises:
        gec.InvalidArgument for bad inputs or counts; what gec.Session and
        Session.run raise.
    """
    sess = _session(model, threads, compile_options)
    return _json.loads(_gec._bench(sess, inputs, warmup, iterations))


def profile(model, inputs=None, *, iterations=20, threads=0, trace=None, **compile_options):
    """Times every node as `gec profile --json` does and returns the same dict.

    Args:
        model, inputs, threads, compile_options: as gec.bench(). A Session
            loaded without profile=True is reopened from the same model with
            profiling on (its own Session is not changed).
        iterations (int): profiled runs (>= 1), after one warm-up run.
        trace (str or os.PathLike or None): also write Chrome trace-event
            JSON there (open in Perfetto).

    Returns:
        dict: "iterations", "threads", "total_ms" (ms per run spent in
        kernels), "nodes" (graph order: "name", "op_type", "kernel",
        "fused_from", "input_shapes", "mean_ms", "share" (0..1),
        "bytes_accessed", "calls"), "op_types" (largest first: "op_type",
        "nodes", "mean_ms", "share").

    Raises:
        gec.IoError when the trace cannot be written; as gec.bench().
    """
    sess = _session(model, threads, compile_options)
    report, trace_json = _gec._profile(sess, inputs, iterations)
    if trace is not None:
        try:
            with open(trace, "w") as f:
                f.write(trace_json + "\n")
        except OSError as e:
            raise IoError(f"{trace}: cannot write the trace ({e.strerror})", ErrorCode.IO) from e
    return _json.loads(report)


def __getattr__(name):
    # gec.torch imports torch (seconds): loaded on first use of gec.torch only.
    if name == "torch":
        import importlib

        return importlib.import_module(".torch", __name__)
    raise AttributeError(f"module 'gec' has no attribute '{name}'")
