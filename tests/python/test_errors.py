"""Bad input raises a gec exception naming what and where, with gec's code;
the interpreter survives and the Session keeps working."""

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import gec
from conftest import make_model, tensor

OK = {"x": np.ones((2, 3), np.float32), "y": np.ones((2, 3), np.float32)}


@pytest.fixture()
def sess(add_model):
    return gec.Session(add_model)


def check(excinfo, cls, code, *words):
    e = excinfo.value
    assert isinstance(e, cls) and isinstance(e, gec.GecError)
    assert e.code == code
    assert e.message == str(e)
    for w in words:
        assert w in str(e), f"{w!r} not in {str(e)!r}"


def test_wrong_dtype(sess):
    with pytest.raises(gec.InvalidArgument) as e:
        sess.run(None, {"x": np.ones((2, 3), np.float64), "y": OK["y"]})
    check(e, ValueError, gec.ErrorCode.INVALID_ARGUMENT, "input 'x'", "float32[2,3]", "float64")
    with pytest.raises(gec.InvalidArgument) as e:
        sess.run(None, {"x": OK["x"], "y": np.ones((2, 3), np.int32)})
    check(e, ValueError, gec.ErrorCode.INVALID_ARGUMENT, "input 'y'", "int32")
    big_endian = np.ones((2, 3), ">f4")
    with pytest.raises(gec.InvalidArgument, match="input 'x'.*>f4"):
        sess.run(None, {"x": big_endian, "y": OK["y"]})
    with pytest.raises(gec.InvalidArgument, match="input 'x'.*object"):
        sess.run(None, {"x": object(), "y": OK["y"]})


@pytest.mark.parametrize("shape", [(3, 2), (2, 3, 1), (6,), ()])
def test_wrong_shape(sess, shape):
    with pytest.raises(gec.InvalidArgument) as e:
        sess.run(None, {"x": np.ones(shape, np.float32), "y": OK["y"]})
    check(e, ValueError, gec.ErrorCode.INVALID_ARGUMENT, "input 'x'", "expected float32[2,3]",
          "float32[" + ",".join(map(str, shape)) + "]")


def test_missing_extra_and_unknown_names(sess):
    with pytest.raises(gec.InvalidArgument) as e:
        sess.run(None, {"x": OK["x"]})
    check(e, ValueError, gec.ErrorCode.INVALID_ARGUMENT, "missing input", "y: float32[2,3]")
    with pytest.raises(gec.InvalidArgument) as e:
        sess.run(None, {**OK, "w": OK["x"]})
    check(e, ValueError, gec.ErrorCode.INVALID_ARGUMENT, "no input 'w'", "x: float32[2,3]", "y: float32[2,3]")
    with pytest.raises(gec.InvalidArgument) as e:
        sess.run(["z", "q"], OK)
    check(e, ValueError, gec.ErrorCode.INVALID_ARGUMENT, "no output 'q'", "outputs: z")
    with pytest.raises(gec.InvalidArgument, match="output_names"):
        sess.run("z", OK)
    with pytest.raises(gec.InvalidArgument, match="dict"):
        sess.run(None, [OK["x"], OK["y"]])
    with pytest.raises(gec.InvalidArgument, match="names must be str"):
        sess.run(None, {0: OK["x"], "y": OK["y"]})
    with pytest.raises(gec.InvalidArgument, match="run_options"):
        sess.run(None, OK, {"log": 1})
    # and it still runs
    (z,) = sess.run(None, OK)
    np.testing.assert_array_equal(z, 2 * OK["x"])


def test_non_model_files(tmp_path, add_model):
    text = tmp_path / "notes.txt"
    text.write_text("hello, I am not a model\n")
    with pytest.raises(gec.InvalidModel) as e:
        gec.Session(text)
    check(e, ValueError, gec.ErrorCode.INVALID_MODEL, "notes.txt", "not a valid ONNX model")
    fake_onnx = tmp_path / "fake.onnx"
    fake_onnx.write_bytes(b"\x00\x01garbage" * 10)
    with pytest.raises(gec.InvalidModel) as e:
        gec.Session(fake_onnx)
    check(e, ValueError, gec.ErrorCode.INVALID_MODEL, "fake.onnx")
    with pytest.raises(gec.InvalidModel) as e:
        gec.compile(fake_onnx)
    check(e, ValueError, gec.ErrorCode.INVALID_MODEL, "fake.onnx")
    fake_gom = tmp_path / "fake.gom"
    fake_gom.write_bytes(b"not a gom file at all, just some bytes" * 4)
    with pytest.raises(gec.CorruptFile) as e:
        gec.Session(fake_gom)
    check(e, ValueError, gec.ErrorCode.CORRUPT_FILE, "fake.gom")
    gom = bytes(gec.compile(add_model))
    truncated = tmp_path / "truncated.gom"
    truncated.write_bytes(gom[: len(gom) // 2])
    with pytest.raises(gec.CorruptFile) as e:
        gec.Session(truncated)
    check(e, ValueError, gec.ErrorCode.CORRUPT_FILE, "truncated")
    flipped = bytearray(gom)
    flipped[-3] ^= 0xFF
    with pytest.raises(gec.CorruptFile, match="checksum"):
        gec.Session(bytes(flipped))
    with pytest.raises(gec.InvalidModel):
        gec.Session(b"\x08\x07garbage bytes")


def test_missing_file_and_directory(tmp_path):
    for p in (tmp_path / "missing.onnx", tmp_path / "missing.gom", tmp_path / "missing"):
        with pytest.raises(gec.IoError) as e:
            gec.Session(p)
        check(e, OSError, gec.ErrorCode.IO, str(p))
    with pytest.raises(gec.IoError) as e:
        gec.Session(tmp_path)
    check(e, OSError, gec.ErrorCode.IO, str(tmp_path), "not a regular file")


def test_bad_constructor_arguments(add_model, tmp_path):
    with pytest.raises(gec.InvalidArgument, match="int"):
        gec.Session(12)
    for bad in (-1, 2**40, 1.5, True):
        with pytest.raises(gec.InvalidArgument, match="threads"):
            gec.Session(add_model, threads=bad)
    m = gec.compile(add_model)
    with pytest.raises(gec.InvalidArgument, match="compiled already"):
        gec.Session(m, opt_level=3)
    m.save(tmp_path / "a.gom")
    with pytest.raises(gec.InvalidArgument, match="a.gom"):
        gec.Session(tmp_path / "a.gom", input_shapes={"x": [2, 3]})


def test_unsupported_op_names_the_node():
    m = make_model([helper.make_node("FancyOp", ["x"], ["y"], name="fancy0", domain="com.example")],
                   [tensor("x", TensorProto.FLOAT, [2])], [tensor("y", TensorProto.FLOAT, [2])],
                   extra_opsets={"com.example": 1})
    with pytest.raises(gec.Unsupported) as e:
        gec.Session(m)
    check(e, NotImplementedError, gec.ErrorCode.UNSUPPORTED, "fancy0", "FancyOp", "com.example")


def test_kernel_error_on_bad_values_names_the_node():
    idx = numpy_helper.from_array(np.array([0], np.int64), "unused")
    m = make_model([helper.make_node("Gather", ["data", "i"], ["out"], name="gather0", axis=0)],
                   [tensor("data", TensorProto.FLOAT, [3, 2]), tensor("i", TensorProto.INT64, [2])],
                   [tensor("out", TensorProto.FLOAT, [2, 2])], initializers=[idx])
    sess = gec.Session(m)
    data = np.arange(6, dtype=np.float32).reshape(3, 2)
    with pytest.raises(gec.InvalidArgument) as e:
        sess.run(None, {"data": data, "i": np.array([0, 7], np.int64)})
    check(e, ValueError, gec.ErrorCode.INVALID_ARGUMENT, "gather0")
    (out,) = sess.run(None, {"data": data, "i": np.array([2, 0], np.int64)})
    np.testing.assert_array_equal(out, data[[2, 0]])


def test_sequence_input_errors():
    seq = helper.make_tensor_sequence_value_info("xs", TensorProto.FLOAT, None)
    m = make_model([helper.make_node("SequenceLength", ["xs"], ["n"])], [seq], [tensor("n", TensorProto.INT64, [])],
                   opset=15)
    sess = gec.Session(m)
    with pytest.raises(gec.InvalidArgument, match="input 'xs'.*list"):
        sess.run(None, {"xs": np.ones(3, np.float32)})
    with pytest.raises(gec.InvalidArgument, match=r"input 'xs'\[1\].*int64"):
        sess.run(None, {"xs": [np.ones(3, np.float32), np.ones(2, np.int64)]})
    with pytest.raises(gec.InvalidArgument, match="input 'xs'.*None"):
        sess.run(None, {"xs": None})
    (n,) = sess.run(None, {"xs": []})
    assert n == 0


def test_odd_objects_raise_instead_of_crashing(sess):
    import types

    x = OK["x"]
    with pytest.raises(gec.InvalidArgument, match="dict"):
        sess.run(None, types.MappingProxyType(OK))
    with pytest.raises(gec.InvalidArgument, match="input 'x'.*object"):
        sess.run(None, {"x": None, "y": x})
    with pytest.raises(gec.InvalidArgument, match="input 'x': expected a numpy array, got list"):
        sess.run(None, {"x": [[1.0, 2.0], [3.0]], "y": x})  # ragged: numpy refuses it
    with pytest.raises(gec.InvalidArgument, match=r"got float32\[0,3\]"):
        sess.run(None, {"x": np.ones((0, 3), np.float32), "y": x})
    huge = np.lib.stride_tricks.as_strided(np.zeros(1, np.float32), (2**20, 2**20), (0, 0))
    with pytest.raises(MemoryError):  # the one copy of a strided array cannot be made
        sess.run(None, {"x": huge, "y": x})
    # objects made without __init__ have no state to reach
    with pytest.raises(AttributeError):
        gec.Session.__new__(gec.Session).run(None, OK)
    with pytest.raises(AttributeError):
        len(gec.CompiledModel.__new__(gec.CompiledModel))
    with pytest.raises(gec.InvalidArgument, match="gec.compile"):
        gec.CompiledModel(b"GECOM")
    # subclasses and other containers numpy understands work
    sub = x.view(type("Sub", (np.ndarray,), {}))
    (z,) = sess.run(("z",), {"x": sub, "y": memoryview(x)})
    assert sess._last_input_pointers()[0] == sub.ctypes.data
    np.testing.assert_array_equal(z, 2 * x)
