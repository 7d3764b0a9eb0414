"""Shared helpers of the Python tests: the shared models, tiny ONNX models
built with onnx.helper, reading TensorProto files, comparing outputs."""

import os
import pathlib

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

REPO = pathlib.Path(__file__).resolve().parents[2]
SHARED = pathlib.Path(os.environ.get("GEC_SHARED_DIR", REPO.parent / "shared"))
MODELS = SHARED / "models"
GEC_BINARY = os.environ.get("GEC_BINARY", str(REPO / "build" / "gec"))

# The shared models' reference outputs come from ONNX Runtime; compared as
# ../shared/models/README.md says (and `gec test` does): fp32 rtol 1e-3, atol 1e-4.
RTOL, ATOL = 1e-3, 1e-4


# Compile options for the tests that run real convolutional models: the
# defaults (layout_propagation asks oneDNN and keeps convolutions plain where
# nChw16c / nhwc would get a reference kernel, e.g. nChw16c on CPUs without
# AVX-512).
CONV_OPTIONS = {}


def shared_model_dirs():
    """Every ../shared/models/<name>/ with model.onnx and test_data_set_0."""
    if not MODELS.is_dir():
        raise RuntimeError(f"{MODELS}: the shared models folder is missing (set GEC_SHARED_DIR)")
    dirs = sorted(d for d in MODELS.iterdir() if (d / "model.onnx").is_file() and (d / "test_data_set_0").is_dir())
    if not dirs:
        raise RuntimeError(f"{MODELS}: no model folders")
    return dirs


def read_pb(path):
    """(name, array) of an ONNX TensorProto file."""
    t = TensorProto()
    t.ParseFromString(pathlib.Path(path).read_bytes())
    return t.name, numpy_helper.to_array(t)


def read_data_set(model_dir):
    """({input name: array}, [(output name, array)]) of test_data_set_0."""
    ds = pathlib.Path(model_dir) / "test_data_set_0"
    inputs = dict(read_pb(p) for p in sorted(ds.glob("input_*.pb"), key=lambda p: int(p.stem.split("_")[1])))
    outputs = [read_pb(p) for p in sorted(ds.glob("output_*.pb"), key=lambda p: int(p.stem.split("_")[1]))]
    return inputs, outputs


def assert_close(got, want, rtol=RTOL, atol=ATOL, what="output"):
    """Shape and dtype exactly; integers and bools exactly; floats with
    |got - want| <= atol + rtol * |want|, NaN equal to NaN."""
    assert isinstance(got, np.ndarray), f"{what}: got {type(got).__name__}"
    assert got.shape == want.shape, f"{what}: shape {got.shape}, want {want.shape}"
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype}, want {want.dtype}"
    if np.issubdtype(want.dtype, np.floating):
        g, w = got.astype(np.float64), want.astype(np.float64)
        bad = ~((np.abs(g - w) <= atol + rtol * np.abs(w)) | (np.isnan(g) & np.isnan(w)))
        assert not bad.any(), (f"{what}: {int(bad.sum())} of {bad.size} elements off, worst |d| "
                               f"{np.nanmax(np.abs(g - w)):.3g}")
    else:
        np.testing.assert_array_equal(got, want, err_msg=what)


def make_model(nodes, inputs, outputs, initializers=(), opset=13, ir_version=8, extra_opsets=None):
    """Serialized ModelProto (checked by the ONNX checker) of one graph."""
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    opsets = [helper.make_opsetid("", opset)] + [helper.make_opsetid(d, v) for d, v in (extra_opsets or {}).items()]
    model = helper.make_model(graph, opset_imports=opsets, ir_version=ir_version)
    onnx.checker.check_model(model)
    return model.SerializeToString()


def tensor(name, elem_type, shape):
    return helper.make_tensor_value_info(name, elem_type, shape)


@pytest.fixture(scope="session")
def add_model():
    """z = x + y, float32 [2,3] (static)."""
    return make_model([helper.make_node("Add", ["x", "y"], ["z"], name="add0")],
                      [tensor("x", TensorProto.FLOAT, [2, 3]), tensor("y", TensorProto.FLOAT, [2, 3])],
                      [tensor("z", TensorProto.FLOAT, [2, 3])])


@pytest.fixture(scope="session")
def dynamic_model():
    """y = Relu(x) * 2 and s = Shape(x), x float32 [N, ?, 3] (one named and one unnamed dynamic dim)."""
    two = numpy_helper.from_array(np.array(2.0, dtype=np.float32), "two")
    return make_model([helper.make_node("Relu", ["x"], ["r"], name="relu0"),
                       helper.make_node("Mul", ["r", "two"], ["y"], name="mul0"),
                       helper.make_node("Shape", ["x"], ["s"], name="shape0")],
                      [tensor("x", TensorProto.FLOAT, ["N", None, 3])],
                      [tensor("y", TensorProto.FLOAT, ["N", None, 3]), tensor("s", TensorProto.INT64, [3])],
                      initializers=[two])


@pytest.fixture()
def add_onnx(tmp_path, add_model):
    p = tmp_path / "add.onnx"
    p.write_bytes(add_model)
    return p
