"""The C API (include/gec/c_api.h) bound from Python with ctypes, as another
language would bind it: no C++ and no pybind11 involved. Compiles a model
with libgec_compiler, runs it with libgec_runtime, and compares with numpy."""

import ctypes
import os

import numpy as np
import pytest
from onnx import TensorProto, helper

LIB_DIR = os.environ["GEC_LIB_DIR"]


class Tensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("dtype", ctypes.c_int32), ("rank", ctypes.c_int32),
                ("dims", ctypes.POINTER(ctypes.c_int64)), ("byte_size", ctypes.c_size_t)]


class IoInfo(ctypes.Structure):
    _fields_ = [("name", ctypes.c_char_p), ("kind", ctypes.c_int32), ("dtype", ctypes.c_int32),
                ("has_shape", ctypes.c_int32), ("rank", ctypes.c_int32), ("dims", ctypes.POINTER(ctypes.c_int64)),
                ("dim_params", ctypes.POINTER(ctypes.c_char_p))]


@pytest.fixture(scope="module")
def libs():
    rt = ctypes.CDLL(os.path.join(LIB_DIR, "libgec_runtime.so"))
    comp = ctypes.CDLL(os.path.join(LIB_DIR, "libgec_compiler.so"))
    rt.gec_last_error_message.restype = ctypes.c_char_p
    rt.gec_status_name.restype = ctypes.c_char_p
    rt.gec_version.restype = ctypes.c_char_p
    rt.gec_session_input_count.restype = ctypes.c_size_t
    rt.gec_session_output_count.restype = ctypes.c_size_t
    rt.gec_result_count.restype = ctypes.c_size_t
    rt.gec_session_load.argtypes = [ctypes.c_char_p, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p)]
    rt.gec_session_free.argtypes = [ctypes.c_void_p]
    rt.gec_session_input_count.argtypes = [ctypes.c_void_p]
    rt.gec_session_output_count.argtypes = [ctypes.c_void_p]
    rt.gec_session_input_info.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(IoInfo)]
    rt.gec_session_run.argtypes = [ctypes.c_void_p, ctypes.POINTER(Tensor), ctypes.c_size_t,
                                   ctypes.POINTER(Tensor), ctypes.c_size_t]
    rt.gec_session_run_alloc.argtypes = [ctypes.c_void_p, ctypes.POINTER(Tensor), ctypes.c_size_t,
                                         ctypes.POINTER(ctypes.c_void_p)]
    rt.gec_result_count.argtypes = [ctypes.c_void_p]
    rt.gec_result_get.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.POINTER(Tensor)]
    rt.gec_result_free.argtypes = [ctypes.c_void_p]
    comp.gec_compile_file.argtypes = [ctypes.c_char_p, ctypes.c_char_p, ctypes.c_void_p, ctypes.c_void_p]
    return rt, comp


def view(a):
    dims = (ctypes.c_int64 * a.ndim)(*a.shape)
    return Tensor(a.ctypes.data, 1, a.ndim, dims, a.nbytes), dims


def test_compile_load_run_from_ctypes(libs, tmp_path):
    rt, comp = libs
    g = helper.make_graph([helper.make_node("MatMul", ["x", "w"], ["m"]), helper.make_node("Tanh", ["m"], ["y"])],
                          "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 4]),
                                helper.make_tensor_value_info("w", TensorProto.FLOAT, [4, 3])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["N", 3])])
    onnx_path, gom_path = tmp_path / "m.onnx", tmp_path / "m.gom"
    onnx_path.write_bytes(helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)]).SerializeToString())
    assert comp.gec_compile_file(str(onnx_path).encode(), str(gom_path).encode(), None, None) == 0, \
        rt.gec_last_error_message()
    sess = ctypes.c_void_p()
    assert rt.gec_session_load(str(gom_path).encode(), None, ctypes.byref(sess)) == 0, rt.gec_last_error_message()
    assert rt.gec_session_input_count(sess) == 2 and rt.gec_session_output_count(sess) == 1
    info = IoInfo()
    assert rt.gec_session_input_info(sess, 0, ctypes.byref(info)) == 0
    assert info.name == b"x" and info.rank == 2 and info.dims[0] == -1 and info.dim_params[0] == b"N"

    rng = np.random.default_rng(0)
    x = rng.standard_normal((5, 4), dtype=np.float32)
    w = rng.standard_normal((4, 3), dtype=np.float32)
    (tx, dx), (tw, dw) = view(x), view(w)
    inputs = (Tensor * 2)(tx, tw)
    result = ctypes.c_void_p()
    assert rt.gec_session_run_alloc(sess, inputs, 2, ctypes.byref(result)) == 0, rt.gec_last_error_message()
    assert rt.gec_result_count(result) == 1
    out = Tensor()
    assert rt.gec_result_get(result, 0, ctypes.byref(out)) == 0
    assert out.rank == 2 and (out.dims[0], out.dims[1]) == (5, 3)
    got = np.ctypeslib.as_array(ctypes.cast(out.data, ctypes.POINTER(ctypes.c_float)), shape=(5, 3)).copy()
    np.testing.assert_allclose(got, np.tanh(x @ w), rtol=1e-5, atol=1e-6)
    rt.gec_result_free(result)

    # Into a numpy buffer of the caller's.
    y = np.zeros((5, 3), np.float32)
    ty, dy = view(y)
    assert rt.gec_session_run(sess, inputs, 2, ctypes.byref(ty), 1) == 0, rt.gec_last_error_message()
    np.testing.assert_array_equal(y, got)

    # A bad call: a status and a message, the process goes on.
    small = np.zeros((2, 3), np.float32)
    ts, ds = view(small)
    assert rt.gec_status_name(rt.gec_session_run(sess, inputs, 2, ctypes.byref(ts), 1)) == b"GEC_INVALID_ARGUMENT"
    assert b"output 'y'" in rt.gec_last_error_message()
    assert rt.gec_session_load(b"/nonexistent.gom", None, ctypes.byref(ctypes.c_void_p())) == 5  # GEC_IO
    rt.gec_session_free(sess)
