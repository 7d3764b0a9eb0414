"""gec.compile(): from a path and from bytes, the report, .save(), options."""

import numpy as np
import onnx
import pytest

import gec
from conftest import CONV_OPTIONS, MODELS, assert_close, read_data_set

SQUEEZENET = MODELS / "squeezenet1_1"


def test_compile_path_report_and_save(tmp_path):
    m = gec.compile(SQUEEZENET / "model.onnx", **CONV_OPTIONS)
    assert isinstance(m, gec.CompiledModel)
    data = bytes(m)
    assert len(m) == len(data) > 1_000_000  # squeezenet's weights are ~5 MB
    assert data[:5] == b"GECOM"
    r = m.report
    assert set(r["stages"]) == {"parse", "optimize", "schedule", "memory", "lower", "pack_weights", "serialize"}
    assert all(v >= 0 for v in r["stages"].values())
    assert r["passes"] and {"name", "ms", "nodes_before", "nodes_after", "changes"} <= set(r["passes"][0])
    n_onnx = len(onnx.load(str(SQUEEZENET / "model.onnx")).graph.node)
    assert r["nodes"]["onnx"] == n_onnx and 0 < r["nodes"]["final"] < n_onnx  # Conv+Relu fused at -O2
    assert r["memory"]["arena_bytes"] >= r["memory"]["lower_bound_bytes"] > 0
    assert r["gom_bytes"] == len(m)
    # .data reads the bytes in place, read-only
    mv = m.data
    assert mv.readonly and mv.nbytes == len(m) and mv[:5].tobytes() == b"GECOM"

    out = tmp_path / "sq.gom"
    m.save(out)
    assert out.read_bytes() == data
    inputs, outputs = read_data_set(SQUEEZENET)
    sess = gec.Session(out)
    assert sess.compile_report is None  # loaded, not compiled
    got = sess.run(None, inputs)
    # Weights packed at compile time on this machine are read in place.
    pw = sess.packed_weights
    assert pw["stored"] == r["packed_weights"]["weights"] > 0
    assert pw["adopted"] == pw["stored"] and pw["packed"] == 0
    assert pw["stored_bytes"] >= r["packed_weights"]["bytes"]
    for (name, want), g in zip(outputs, got):
        assert_close(g, want, what=name)


def test_compile_bytes_matches_path():
    from_path = gec.compile(SQUEEZENET / "model.onnx", **CONV_OPTIONS)
    from_bytes = gec.compile((SQUEEZENET / "model.onnx").read_bytes(), **CONV_OPTIONS)
    assert from_bytes.report["nodes"] == from_path.report["nodes"]
    assert from_bytes.report["memory"] == from_path.report["memory"]
    inputs, _ = read_data_set(SQUEEZENET)
    a = gec.Session(from_path).run(None, inputs)
    b = gec.Session(from_bytes).run(None, inputs)
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)
    # bytearray and memoryview are buffers too
    raw = bytearray((SQUEEZENET / "model.onnx").read_bytes())
    assert gec.compile(memoryview(raw), **CONV_OPTIONS).report["nodes"] == from_path.report["nodes"]


def test_opt_levels_change_the_graph():
    final = {lvl: gec.compile(SQUEEZENET / "model.onnx", opt_level=lvl).report["nodes"]["final"] for lvl in (0, 2)}
    assert final[0] == len(onnx.load(str(SQUEEZENET / "model.onnx")).graph.node)  # -O0 keeps every node
    assert final[2] < final[0]


def test_disabled_pass_is_skipped():
    names = [p["name"] for p in gec.compile(SQUEEZENET / "model.onnx").report["passes"]]
    assert "conv_activation_fusion" in names
    r = gec.compile(SQUEEZENET / "model.onnx", disabled_passes=["conv_activation_fusion"]).report
    assert "conv_activation_fusion" not in [p["name"] for p in r["passes"]]


def test_input_shapes_fix_dynamic_dims(dynamic_model):
    assert gec.Session(dynamic_model).get_inputs()[0].shape == ["N", None, 3]
    m = gec.compile(dynamic_model, input_shapes={"x": (2, 5, 3)})
    sess = gec.Session(m)
    assert sess.get_inputs()[0].shape == [2, 5, 3]
    assert sess.get_outputs()[0].shape == [2, 5, 3]
    x = np.linspace(-1, 1, 30, dtype=np.float32).reshape(2, 5, 3)
    y, s = sess.run(None, {"x": x})
    np.testing.assert_array_equal(y, np.maximum(x, 0) * 2)
    np.testing.assert_array_equal(s, [2, 5, 3])


def test_session_compiles_onnx_in_memory(add_onnx):
    sess = gec.Session(add_onnx, opt_level=0)
    r = sess.compile_report
    assert r["nodes"] == {"onnx": 1, "final": 1}
    x = np.ones((2, 3), np.float32)
    np.testing.assert_array_equal(sess.run(None, {"x": x, "y": x})[0], x + x)


def test_streams_option_sets_the_plans_stream_count():
    one = gec.Session(gec.compile(SQUEEZENET / "model.onnx", streams=1))
    two = gec.Session(SQUEEZENET / "model.onnx", streams=2)
    assert (one.streams, two.streams) == (1, 2)
    assert gec.Session(gec.compile(SQUEEZENET / "model.onnx", streams="auto")).streams >= 1
    feed, _ = read_data_set(SQUEEZENET)
    assert_close(two.run(None, feed)[0], one.run(None, feed)[0])


@pytest.mark.parametrize("kwargs, words", [
    ({"streams": 65}, ["streams", "1..64", "65"]),
    ({"streams": 0}, ["streams", "1..64", "got 0"]),
    ({"streams": -1}, ["streams", "1..64", "-1"]),
    ({"streams": 2**70}, ["streams", "1..64", str(2**70)]),
    ({"streams": "many"}, ["streams", "'auto'", "many"]),
    ({"streams": 1.5}, ["streams", "float"]),
    ({"opt_level": 7}, ["optimization level", "0..3", "7"]),
    ({"opt_level": "2"}, ["opt_level", "str"]),
    ({"disabled_passes": ["no_such_pass"]}, ["unknown pass or rule 'no_such_pass'", "conv_activation_fusion", "conv_bn"]),
    ({"disabled_passes": "cse"}, ["disabled_passes", "list"]),
    ({"input_shapes": {"nope": [1, 2]}}, ["nope"]),
    ({"input_shapes": {"x": [2, -1, 3]}}, ["input_shapes['x']", ">= 0"]),
    ({"input_shapes": {"x": [2, 3]}}, ["x"]),  # rank 2 for a rank-3 input
    ({"input_shapes": [2, 3]}, ["input_shapes", "dict"]),
])
def test_bad_compile_options(dynamic_model, kwargs, words):
    with pytest.raises(gec.InvalidArgument) as e:
        gec.compile(dynamic_model, **kwargs)
    assert e.value.code == gec.ErrorCode.INVALID_ARGUMENT
    for w in words:
        assert w in str(e.value)


def test_compile_refuses_gom_bytes_and_other_objects(add_model):
    gom = bytes(gec.compile(add_model))
    with pytest.raises(gec.InvalidArgument, match="compiled .gom"):
        gec.compile(gom)
    with pytest.raises(gec.InvalidArgument, match="int"):
        gec.compile(42)


def test_save_to_unwritable_place(add_model, tmp_path):
    m = gec.compile(add_model)
    with pytest.raises(gec.IoError) as e:
        m.save(tmp_path / "no_such_dir" / "m.gom")
    assert isinstance(e.value, OSError) and e.value.code == gec.ErrorCode.IO
    assert "no_such_dir" in str(e.value)


def test_version():
    assert gec.version() == gec.__version__
    assert gec.__version__.count(".") == 2


def _tfjs_model(folder):
    """A TensorFlow.js graph model y = relu(x * w) with w in a weight shard."""
    node = lambda name, op, inputs=(), **attr: {"name": name, "op": op, "input": list(inputs), "attr": attr}
    f32 = {"type": "DT_FLOAT"}
    topo = {"node": [node("x", "Placeholder", dtype=f32, shape={"shape": {"dim": [{"size": "2"}, {"size": "3"}]}}),
                     node("w", "Const", dtype=f32, value={"tensor": {"dtype": "DT_FLOAT"}}),
                     node("m", "Mul", ["x", "w"], T=f32), node("y", "Relu", ["m"], T=f32)]}
    import json
    (folder / "model.json").write_text(json.dumps({
        "format": "graph-model", "modelTopology": topo,
        "weightsManifest": [{"paths": ["w.bin"], "weights": [{"name": "w", "shape": [3], "dtype": "float32"}]}]}))
    (folder / "w.bin").write_bytes(np.array([1, -2, 3], np.float32).tobytes())
    return folder / "model.json"


def test_tensorflow_models_from_a_path_and_from_bytes(tmp_path):
    path = _tfjs_model(tmp_path)
    x = np.array([[1, 1, 1], [-1, 2, 0.5]], np.float32)
    want = np.maximum(x * np.array([1, -2, 3], np.float32), 0)
    sess = gec.Session(path)
    assert sess.compile_report["frontend"] == "tfjs"
    assert [i.name for i in sess.get_outputs()] == ["y:0"]
    (y,) = sess.run(None, {"x": x})
    np.testing.assert_array_equal(y, want)
    # From bytes the shards are looked up in the working folder: none here.
    with pytest.raises(gec.IoError):
        gec.compile(path.read_bytes())
