"""gec.Session: metadata, run() on every shared model against its reference
outputs, zero copy (checked through the addresses the runtime got), the GIL
released while running, non-tensor values."""

import gc
import sys
import threading
import time

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

import gec
from conftest import CONV_OPTIONS, MODELS, assert_close, make_model, read_data_set, shared_model_dirs, tensor

MODEL_DIRS = shared_model_dirs()

ONNX_TYPE = {TensorProto.FLOAT: "float", TensorProto.DOUBLE: "double", TensorProto.INT64: "int64",
             TensorProto.INT32: "int32", TensorProto.BOOL: "bool", TensorProto.UINT8: "uint8",
             TensorProto.FLOAT16: "float16", TensorProto.STRING: "string", TensorProto.INT8: "int8"}


def onnx_dims(vi):
    """A ValueInfo's dims as ONNX Runtime shows them: int, dim_param or None."""
    out = []
    for d in vi.type.tensor_type.shape.dim:
        out.append(d.dim_value if d.HasField("dim_value") else (d.dim_param if d.HasField("dim_param") else None))
    return out


def same_dims(got, declared):
    """Static dims and dim names as declared; an unnamed dynamic dim is None,
    or the name ONNX shape inference gave it (unk__N)."""
    return len(got) == len(declared) and all(
        g == d or (d is None and (g is None or g.startswith("unk__"))) for g, d in zip(got, declared))


@pytest.fixture(scope="module", params=MODEL_DIRS, ids=[d.name for d in MODEL_DIRS])
def shared(request):
    d = request.param
    # adapt_threads off: the runs below must be bit-identical, and on a busy
    # machine a run on fewer threads sums in another order.
    return d, gec.Session(d / "model.onnx", threads=2, adapt_threads=False, **CONV_OPTIONS)


def test_metadata_matches_the_onnx_model(shared):
    d, sess = shared
    g = onnx.load(str(d / "model.onnx"), load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    graph_inputs = [vi for vi in g.input if vi.name not in inits]
    got = sess.get_inputs()
    assert [a.name for a in got] == [vi.name for vi in graph_inputs]
    for a, vi in zip(got, graph_inputs):
        elem = vi.type.tensor_type.elem_type
        assert a.type == f"tensor({ONNX_TYPE[elem]})"
        assert a.kind == "tensor"
        assert same_dims(a.shape, onnx_dims(vi)), (a.name, a.shape, onnx_dims(vi))
        assert a.dtype == onnx.mapping.TENSOR_TYPE_TO_NP_TYPE[elem]
    outs = sess.get_outputs()
    assert [a.name for a in outs] == [vi.name for vi in g.output]
    static_model = all(isinstance(d, int) for a in got for d in a.shape)
    for a, vi in zip(outs, g.output):
        assert a.type == f"tensor({ONNX_TYPE[vi.type.tensor_type.elem_type]})"
        want = onnx_dims(vi)
        assert len(a.shape) == len(want), a.name
        for g_dim, o_dim in zip(a.shape, want):
            if static_model:  # every output dim is proven: the declared one
                assert g_dim == o_dim, (a.name, a.shape, want)
            elif isinstance(g_dim, int):  # a dim gec proves is the declared one
                assert g_dim == o_dim, (a.name, a.shape, want)
            else:  # what gec cannot prove shows as None or the declared name
                assert g_dim is None or g_dim == o_dim or g_dim.startswith("unk__"), (a.name, a.shape, want)
    assert "NodeArg(name=" in repr(got[0])


def test_run_matches_reference_outputs(shared):
    d, sess = shared
    inputs, outputs = read_data_set(d)
    before = {k: v.copy() for k, v in inputs.items()}
    got = sess.run(None, inputs)
    assert len(got) == len(outputs)
    for (name, want), g in zip(outputs, got):
        assert_close(g, want, what=f"{d.name}/{name}")
    for k, v in inputs.items():  # inputs are read, never written
        np.testing.assert_array_equal(v, before[k])
    # Same result on a second run (the arena is reused), and by name.
    names = [o.name for o in sess.get_outputs()]
    again = sess.run(list(reversed(names)), inputs)
    for g, a in zip(got, reversed(again)):
        np.testing.assert_array_equal(g, a)


def test_output_subset_and_order(add_model, dynamic_model):
    sess = gec.Session(dynamic_model)
    x = np.arange(12, dtype=np.float32).reshape(2, 2, 3) - 5
    (s,) = sess.run(["s"], {"x": x})
    np.testing.assert_array_equal(s, [2, 2, 3])
    s2, y = sess.run(["s", "y"], {"x": x})
    np.testing.assert_array_equal(y, np.maximum(x, 0) * 2)
    assert len(sess.run([], {"x": x})) == 2  # [] as None: all


def test_metadata_of_dynamic_dims_and_types(dynamic_model):
    sess = gec.Session(dynamic_model)
    (x,) = sess.get_inputs()
    assert (x.name, x.type, x.dtype, x.kind) == ("x", "tensor(float)", np.float32, "tensor")
    assert same_dims(x.shape, ["N", None, 3])
    y, s = sess.get_outputs()
    # y's last dim is 3, but gec's plan for a dynamic input proves no dim of y: unknown
    assert y.shape[0] == "N" and len(y.shape) == 3 and s.type == "tensor(int64)" and len(s.shape) == 1
    assert s.dtype == np.int64
    # one run per shape: the dynamic plan allocates per run
    for shape in [(1, 1, 3), (4, 7, 3)]:
        xv = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
        yv, sv = sess.run(None, {"x": xv})
        np.testing.assert_array_equal(yv, np.maximum(xv, 0) * 2)
        np.testing.assert_array_equal(sv, shape)


def test_more_dtypes():
    nodes = [helper.make_node("Not", ["b"], ["nb"]), helper.make_node("Neg", ["d"], ["nd"]),
             helper.make_node("Identity", ["h"], ["ih"]), helper.make_node("Identity", ["u"], ["iu"])]
    m = make_model(nodes, [tensor("b", TensorProto.BOOL, [3]), tensor("d", TensorProto.DOUBLE, [2]),
                           tensor("h", TensorProto.FLOAT16, [2]), tensor("u", TensorProto.UINT8, [2])],
                   [tensor("nb", TensorProto.BOOL, [3]), tensor("nd", TensorProto.DOUBLE, [2]),
                    tensor("ih", TensorProto.FLOAT16, [2]), tensor("iu", TensorProto.UINT8, [2])])
    sess = gec.Session(m)
    assert [a.type for a in sess.get_inputs()] == ["tensor(bool)", "tensor(double)", "tensor(float16)",
                                                   "tensor(uint8)"]
    feed = {"b": np.array([True, False, True]), "d": np.array([1.5, -2.0]),
            "h": np.array([0.5, -1], np.float16), "u": np.array([7, 255], np.uint8)}
    nb, nd, ih, iu = sess.run(None, feed)
    np.testing.assert_array_equal(nb, [False, True, False])
    assert nb.dtype == np.bool_ and nd.dtype == np.float64 and ih.dtype == np.float16 and iu.dtype == np.uint8
    np.testing.assert_array_equal(nd, [-1.5, 2.0])
    np.testing.assert_array_equal(ih, feed["h"])
    np.testing.assert_array_equal(iu, feed["u"])


def test_string_tensors():
    m = make_model([helper.make_node("Identity", ["s"], ["t"])], [tensor("s", TensorProto.STRING, [3])],
                   [tensor("t", TensorProto.STRING, [3])])
    sess = gec.Session(m)
    assert sess.get_inputs()[0].type == "tensor(string)" and sess.get_inputs()[0].dtype == np.dtype(object)
    for feed in (np.array(["a", "bc", "h\u00e9"], dtype=object), np.array(["a", "bc", "h\u00e9"])):
        (t,) = sess.run(None, {"s": feed})
        assert t.dtype == object and list(t) == ["a", "bc", "h\u00e9"]


def test_tensor_inputs_of_a_sequence_model_are_read_in_place():
    seq = helper.make_tensor_sequence_value_info("xs", TensorProto.FLOAT, None)
    m = make_model([helper.make_node("SequenceInsert", ["xs", "x"], ["ys"]),
                    helper.make_node("SequenceLength", ["ys"], ["n"])],
                   [seq, tensor("x", TensorProto.FLOAT, [2])],
                   [helper.make_tensor_sequence_value_info("ys", TensorProto.FLOAT, None),
                    tensor("n", TensorProto.INT64, [])], opset=15)
    sess = gec.Session(m)
    x = np.array([7, 8], np.float32)
    ys, n = sess.run(None, {"xs": [np.zeros(1, np.float32)], "x": x})
    assert sess._last_input_pointers() == [0, x.ctypes.data]
    assert n == 2 and len(ys) == 2
    np.testing.assert_array_equal(ys[1], x)
    assert ys[1].ctypes.data != x.ctypes.data  # sequence elements come back as copies
    ys[1][0] = 0
    assert x[0] == 7


def test_sequence_and_optional_values():
    seq = helper.make_tensor_sequence_value_info("xs", TensorProto.FLOAT, None)
    opt = helper.make_value_info("o", helper.make_optional_type_proto(
        helper.make_tensor_type_proto(TensorProto.FLOAT, [2])))
    nodes = [helper.make_node("ConcatFromSequence", ["xs"], ["cat"], axis=0),
             helper.make_node("SequenceLength", ["xs"], ["n"]),
             helper.make_node("OptionalHasElement", ["o"], ["has"]),
             helper.make_node("Identity", ["xs"], ["ys"])]
    m = make_model(nodes, [seq, opt],
                   [tensor("cat", TensorProto.FLOAT, [None]), tensor("n", TensorProto.INT64, []),
                    tensor("has", TensorProto.BOOL, []),
                    helper.make_tensor_sequence_value_info("ys", TensorProto.FLOAT, None)], opset=15)
    sess = gec.Session(m)
    assert [a.type for a in sess.get_inputs()] == ["seq(tensor(float))", "optional(tensor(float))"]
    assert [a.kind for a in sess.get_inputs()] == ["sequence", "optional"]
    assert sess.get_outputs()[3].type == "seq(tensor(float))"
    a, b = np.array([1, 2], np.float32), np.array([3, 4, 5], np.float32)
    cat, n, has, ys = sess.run(None, {"xs": [a, b], "o": None})
    np.testing.assert_array_equal(cat, [1, 2, 3, 4, 5])
    assert n == 2 and not has
    assert isinstance(ys, list) and len(ys) == 2
    np.testing.assert_array_equal(ys[1], b)
    ys[1][0] = 99  # a copy: the input is not touched
    assert b[0] == 3
    _, _, has, _ = sess.run(None, {"xs": [a], "o": np.zeros(2, np.float32)})
    assert has


# ---- zero copy ---------------------------------------------------------------

def test_contiguous_inputs_are_read_in_place(add_model):
    sess = gec.Session(add_model)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    y = np.full((2, 3), 10, np.float32)
    (z,) = sess.run(None, {"x": x, "y": y})
    np.testing.assert_array_equal(z, x + y)
    assert sess._last_input_pointers() == [x.ctypes.data, y.ctypes.data]
    # The output array is gec's buffer (computed into it), not a numpy copy.
    assert sess._last_output_pointers() == [z.ctypes.data]
    assert not z.flags.owndata and type(z.base).__name__ == "PyCapsule"
    assert z.flags.writeable and z.flags.c_contiguous
    # A read-only array (e.g. over bytes) is read in place too.
    ro = np.frombuffer(x.tobytes(), np.float32).reshape(2, 3)
    assert not ro.flags.writeable
    (z2,) = sess.run(None, {"x": ro, "y": y})
    np.testing.assert_array_equal(z2, x + y)
    assert sess._last_input_pointers()[0] == ro.ctypes.data


def test_unaligned_to_16_but_element_aligned_is_in_place(add_model):
    sess = gec.Session(add_model)
    buf = np.arange(7, dtype=np.float32)
    x = buf[1:].reshape(2, 3)  # 4 bytes past a 16-aligned start, C-contiguous
    assert x.flags.c_contiguous and x.flags.aligned and x.ctypes.data % 16 != 0
    y = np.ones((2, 3), np.float32)
    (z,) = sess.run(None, {"x": x, "y": y})
    np.testing.assert_array_equal(z, x + 1)
    assert sess._last_input_pointers()[0] == x.ctypes.data


def test_strided_misaligned_and_non_arrays_are_copied_once(add_model):
    sess = gec.Session(add_model)
    y = np.ones((2, 3), np.float32)
    big = np.arange(12, dtype=np.float32).reshape(2, 6)
    strided = big[:, ::2]
    fortran = np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3))
    raw = np.zeros(6 * 4 + 1, np.uint8)
    misaligned = raw[1:].view(np.float32).reshape(2, 3)
    misaligned[...] = [[1, 2, 3], [4, 5, 6]]
    assert not misaligned.flags.aligned
    for x in (strided, fortran, misaligned, big.T[::2].T):
        (z,) = sess.run(None, {"x": x, "y": y})
        np.testing.assert_array_equal(z, x + 1)
        assert sess._last_input_pointers()[0] != x.ctypes.data
    # A list is converted by numpy: to float64 here, which is refused
    with pytest.raises(gec.InvalidArgument, match="float64"):
        sess.run(None, {"x": [[1.0, 2, 3], [4, 5, 6]], "y": y})


def test_outputs_outlive_the_session(dynamic_model):
    sess = gec.Session(dynamic_model)
    x = np.ones((2, 4, 3), np.float32)
    y, s = sess.run(None, {"x": x})
    assert sess._last_output_pointers()[0] == y.ctypes.data  # dynamic plan: still no copy
    del sess
    gc.collect()
    np.testing.assert_array_equal(y, 2 * x)
    np.testing.assert_array_equal(s, [2, 4, 3])


# ---- threads ----------------------------------------------------------------------

def test_gil_is_released_while_running():
    # With a huge switch interval, another Python thread can only run when
    # this one releases the GIL itself. If run() kept it, `ticks` could not
    # move while this thread does nothing but call run().
    sess = gec.Session(MODELS / "squeezenet1_1" / "model.onnx", threads=1, **CONV_OPTIONS)
    inputs, _ = read_data_set(MODELS / "squeezenet1_1")
    sess.run(None, inputs)  # warm-up
    ticks = [0]
    stop = threading.Event()
    started = threading.Event()

    def spin():
        started.set()
        while not stop.is_set():
            ticks[0] += 1
            time.sleep(0.0005)  # gives the GIL back, so the main thread never waits for a switch

    old = sys.getswitchinterval()
    t = threading.Thread(target=spin)
    t.start()
    started.wait()
    sys.setswitchinterval(1000.0)
    try:
        before = ticks[0]
        for _ in range(5):
            sess.run(None, inputs)
        moved = ticks[0] - before
    finally:
        sys.setswitchinterval(old)
        stop.set()
        t.join()
    assert moved > 0


def test_runs_from_many_threads_on_one_session(add_model):
    sess = gec.Session(add_model, threads=1)
    errors = []

    def work(k):
        try:
            for i in range(50):
                x = np.full((2, 3), k, np.float32)
                y = np.full((2, 3), i, np.float32)
                (z,) = sess.run(None, {"x": x, "y": y})
                if not (z == k + i).all():
                    errors.append((k, i, z))
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_threads_option_and_properties(add_model):
    sess = gec.Session(add_model, threads=1)
    assert sess.threads == 1
    assert sess.node_count == 1 and sess.arena_bytes >= 0 and sess.weights_bytes == 0 and sess.load_ms > 0
    assert gec.Session(add_model).threads >= 1  # 0: all cores


def test_model_sources(add_model, add_onnx, tmp_path):
    x = np.ones((2, 3), np.float32)
    m = gec.compile(add_model)
    gom = tmp_path / "add.gom"
    m.save(gom)
    odd_name = tmp_path / "add.model"  # neither .onnx nor .gom: sniffed
    odd_name.write_bytes(bytes(m))
    for src in (add_model, bytearray(add_model), str(add_onnx), add_onnx, m, bytes(m), gom, str(gom), odd_name):
        (z,) = gec.Session(src).run(None, {"x": x, "y": x})
        np.testing.assert_array_equal(z, 2 * x)
