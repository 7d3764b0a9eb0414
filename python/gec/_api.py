"""The public classes and functions of gec, over the binding (gec._gec)."""

import json as _json

from . import _gec
from .errors import ErrorCode, InvalidArgument, IoError

__all__ = ["compile", "CompiledModel", "Session", "bench", "profile"]


class CompiledModel:
    """A model compiled by gec.compile(): the offline model (.gom) bytes and
    the compile report.

    len(m) is the .gom size in bytes; m.data reads the bytes in place (a
    read-only memoryview) and bytes(m) / m.to_bytes() copies them.
    gec.Session(m) runs the model without writing a file.
    """

    __slots__ = ("_impl",)

    def __init__(self, impl):
        if not isinstance(impl, _gec._CompiledModel):
            raise InvalidArgument("gec.CompiledModel is made by gec.compile()", ErrorCode.INVALID_ARGUMENT)
        self._impl = impl

    def __len__(self):
        return len(self._impl)

    @property
    def data(self):
        """The .gom bytes as a read-only memoryview (no copy)."""
        return memoryview(self._impl)

    def to_bytes(self):
        """The .gom file contents as bytes (a copy)."""
        return self._impl.to_bytes()

    __bytes__ = to_bytes

    @property
    def report(self):
        """The compile report (dict): "stages" (ms per stage: parse, optimize,
        schedule, memory, lower, serialize), "passes" (name, ms, nodes_before,
        nodes_after, changes per pass), "nodes" ("onnx": nodes in the ONNX
        file, "final": after optimization), "memory" (arena_bytes,
        lower_bound_bytes, no_reuse_bytes, reuse_rate, weights_bytes, ...),
        "gom_bytes". The JSON of `gec compile --report`."""
        return self._impl.report

    @property
    def report_json(self):
        """The compile report as JSON text."""
        return self._impl.report_json

    def save(self, path):
        """Writes the .gom file to `path` (str or os.PathLike) atomically (a
        temporary file renamed). Raises gec.IoError when it cannot be written."""
        self._impl.save(path)

    def __repr__(self):
        return f"<gec.CompiledModel {len(self)} bytes>"


def compile(model, opt_level=2, *, input_shapes=None, disabled_passes=None, verify_each_pass=None,  # noqa: A001
            dump_graph_dir=None, streams=None):
    """Compiles an ONNX model into an offline model in memory.

    Args:
        model: path of an .onnx file (str or os.PathLike; external data is
            read from its folder) or the serialized ONNX ModelProto (bytes,
            bytearray, memoryview; external data from the current directory).
        opt_level (int): 0 none, 1 cleanup, 2 + fusion (default), 3 everything.
        input_shapes (dict): {input name: dims} fixing dynamic dims (ints
            >= 0), for a static plan with pre-planned memory.
        disabled_passes (list of str): pass names to skip.
        verify_each_pass (bool): run the IR verifier after every pass.
        dump_graph_dir (str): write the graph before/after each pass there.
        streams ("auto" or int 1..64): streams to spread the graph over, as
            `gec compile --streams` (default "auto": from the graph's width
            and the cores at opt_level >= 2, one stream below; 1: one
            sequential step list).

    Returns:
        gec.CompiledModel: .save(path), .report (dict), bytes(m).

    Raises:
        gec.IoError: the file cannot be read.
        gec.InvalidModel: not an ONNX model, or the ONNX checker rejects it.
        gec.Unsupported: an op, opset or dtype gec does not implement (the
            message names the node, op type, domain, opset and input dtypes).
        gec.InvalidArgument: a bad option (level outside 0..3, unknown pass,
            input_shapes naming no input or contradicting its static dims,
            streams not "auto" or 1..64).

    The GIL is released while compiling.
    """
    return CompiledModel(_gec._compile(model, opt_level, input_shapes, disabled_passes, verify_each_pass,
                                       dump_graph_dir, streams))


class Session:
    """A loaded model, ready to run: gec's counterpart of
    onnxruntime.InferenceSession.

        sess = gec.Session("model.onnx", threads=2)   # or a .gom, bytes, a CompiledModel
        x = sess.get_inputs()[0]                       # .name, .type, .shape, .dtype
        (y,) = sess.run(None, {x.name: array})         # list of numpy arrays

    Args:
        model: a .gom path, an .onnx path (compiled in memory first), the
            bytes of a .gom or ONNX model, or a gec.CompiledModel. A path
            ending in neither .onnx nor .gom is sniffed (the .gom magic).
        threads (int): intra-op threads (OpenMP, oneDNN); 0 = all cores.
        opt_level, input_shapes, disabled_passes, verify_each_pass,
        dump_graph_dir, streams: as gec.compile(), for ONNX models only (given for a
            compiled model they raise gec.InvalidArgument).
        profile (bool): collect per-node times (gec.profile() does this itself).
        adapt_threads (bool): run on fewer threads while other processes
            keep the cores busy, when that is faster, and small steps on
            one thread where the first runs (and a round every 1000 runs
            and 30 s, or when runs drift 20% slower) measure that faster
            here (default; C++
            SessionOptions::adapt_threads). False: always `threads`, so that
            every run does its arithmetic in the same order (bit-identical
            outputs run after run).

    Raises:
        gec.IoError (unreadable file), gec.CorruptFile (a truncated or
        corrupted .gom, or one of a newer format), gec.InvalidArgument (bad
        arguments), and what gec.compile() raises.

    Runs of one Session are serialized by a lock (one arena); use one Session
    per thread for parallel runs. The GIL is released while compiling,
    loading and running.
    """

    def __init__(self, model, *, threads=0, opt_level=None, input_shapes=None, disabled_passes=None,
                 verify_each_pass=None, dump_graph_dir=None, streams=None, profile=False, adapt_threads=True):
        if isinstance(model, CompiledModel):
            model = model._impl
        if not isinstance(threads, int) or isinstance(threads, bool) or not 0 <= threads < 2**31:
            raise InvalidArgument(f"Session: threads must be an int >= 0 (0 = all cores), got {threads!r}",
                                  ErrorCode.INVALID_ARGUMENT)
        impl = _gec._Session(model, threads, opt_level, input_shapes, disabled_passes, verify_each_pass,
                             dump_graph_dir, streams, bool(profile), bool(adapt_threads))
        self._impl = impl
        # The bound C++ methods themselves, so that a call costs no Python
        # frame (they shadow the documented methods below).
        self.run = impl.run
        self.get_inputs = impl.get_inputs
        self.get_outputs = impl.get_outputs

    def get_inputs(self):
        """The model inputs (list of gec.NodeArg), in graph order."""
        return self._impl.get_inputs()

    def get_outputs(self):
        """The model outputs (list of gec.NodeArg), in graph order."""
        return self._impl.get_outputs()

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model.

        Args:
            output_names (list of str or None): the outputs to return, in
                this order; None or [] for all, in graph order.
            input_feed (dict): {input name: numpy.ndarray} with every input.
                An array must have the input's dtype exactly (NodeArg.dtype;
                no casting) and its static dims. A C-contiguous, aligned array
                is read in place (no copy); any other array (strided, a
                transposed view, Fortran order, misaligned, or what numpy
                makes of a non-array) is copied once. A sequence input is a
                list of arrays, an optional one an array or None (copied).
            run_options: must be None (ONNX Runtime compatibility).

        Returns:
            list of numpy.ndarray, one per name asked for (a sequence output
            is a list of arrays, an absent optional None). The arrays own
            gec's output buffers: outputs are computed into them, not copied.

        Raises:
            gec.InvalidArgument: input_feed is not a dict; an input is missing
                or the model has no input of that name; an array of another
                dtype or shape; an unknown output name; a kernel refusing the
                values (e.g. a Gather index out of range, naming the node).
        """
        return self._impl.run(output_names, input_feed, run_options)

    @property
    def threads(self):
        """Intra-op threads the runs use."""
        return self._impl.threads

    @property
    def load_ms(self):
        """Milliseconds it took to compile (for an ONNX model) and load."""
        return self._impl.load_ms

    @property
    def arena_bytes(self):
        """Activation memory planned at compile time, bytes."""
        return self._impl.arena_bytes

    @property
    def streams(self):
        """Streams the plan spreads the main graph over (1: one sequential
        step list); a run uses at most one worker per thread."""
        return self._impl.streams

    @property
    def weights_bytes(self):
        """Constant data, bytes (memory-mapped or shared, not copied)."""
        return self._impl.weights_bytes

    @property
    def packed_weights(self):
        """Weight copies in the layouts the kernels read, as a dict:
        ``stored`` (packed at compile time, in the .gom), ``adopted`` (of
        those, read in place: the same CPU kind, oneDNN build and per-step
        thread count as the compiler's), ``packed`` (weights the kernels
        packed in memory instead), ``stored_bytes`` (bytes of the .gom's
        WEIGHTS after the constants: the copies and their padding). Counts
        so far: a session's kernels adopt or pack when it loads (those whose
        shapes are known before a run), the rest at their first run."""
        return self._impl.packed_weights

    @property
    def node_count(self):
        """Nodes in the main graph after optimization."""
        return self._impl.node_count

    @property
    def compile_report(self):
        """The compile report (a dict, as CompiledModel.report) when this
        Session compiled an ONNX model, else None."""
        return self._impl.compile_report

    def _last_input_pointers(self):
        """Addresses of the input buffers the last tensor run handed to the
        runtime (the tests check zero copy with them)."""
        return self._impl.last_input_pointers()

    def _last_output_pointers(self):
        """Addresses of the output buffers of the last tensor run."""
        return self._impl.last_output_pointers()

    def __repr__(self):
        return f"<gec.Session {self._impl.text()}>"


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
            path, model bytes, a gec.CompiledModel), loaded (and compiled)
            here with `threads` and `compile_options` (opt_level,
            input_shapes, disabled_passes); that time is load_ms.
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
        "first_run_ms", "load_ms"; "runs_per_s" (1000 / median, also as
        "throughput_per_s"), "batch" (the inputs' common leading dim, else
        1), "samples_per_s" (runs_per_s x batch); "peak_rss_bytes" (of this
        whole process, interpreter included); "threads",
        "min_run_threads" / "max_run_threads" (fewer while other processes
        keep the CPUs busy), "os_threads", "openmp_wait_policy", "warmup",
        "tuning_runs" (untimed runs after the warm-up while the step thread
        tuning measured, at most 40), "iterations".

    Raises:
        gec.InvalidArgument for bad inputs or counts; what gec.Session and
        Session.run raise.
    """
    sess = _session(model, threads, compile_options)
    return _json.loads(_gec._bench(sess._impl, inputs, warmup, iterations))


def profile(model, inputs=None, *, iterations=20, threads=0, trace=None, **compile_options):
    """Times every node as `gec profile --json` does and returns the same dict.

    Args:
        model, inputs, threads, compile_options: as gec.bench(). A Session
            loaded without profile=True is reopened from the same model with
            profiling on (the Session itself is not changed).
        iterations (int): profiled runs (>= 1), after one warm-up run.
        trace (str or os.PathLike or None): also write Chrome trace-event
            JSON there (open in Perfetto).

    Returns:
        dict: "iterations", "warmup" (1), "tuning_runs" (runs after it
        while the step thread tuning measured), "threads", "total_ms" (ms per run spent in
        kernels), "nodes" (graph order, each If / Loop / Scan followed by
        its bodies' nodes: "name", "inside" ("" in the main graph, else the
        holder, e.g. "If_0.then_branch"; a body node's time is inside its
        holder's), "op_type", "kernel", "fused_from", "input_shapes",
        "mean_ms", "share" (0..1), "flops", "gflop_per_s",
        "bytes_accessed", "calls", "threads" (of its last call)), "op_types" (main graph, largest first:
        "op_type", "nodes", "mean_ms", "share").

    Raises:
        gec.IoError when the trace cannot be written; as gec.bench().
    """
    sess = _session(model, threads, compile_options)
    report, trace_json = _gec._profile(sess._impl, inputs, iterations)
    if trace is not None:
        try:
            with open(trace, "w") as f:
                f.write(trace_json + "\n")
        except OSError as e:
            raise IoError(f"{trace}: cannot write the trace ({e.strerror})", ErrorCode.IO) from e
    return _json.loads(report)
