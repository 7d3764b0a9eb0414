#!/usr/bin/python3
"""Builds the opset 18..23 test models of tests/new_opsets/ (one folder per
case, ONNX backend-test layout) from the ONNX operator text of each version,
then has ONNX Runtime write their inputs and reference outputs.

    /usr/bin/python3 tests/new_opsets/make_models.py [--ort DIR]

Needs Debian's python3-onnx (helper only: its checker stops at opset 17)
and onnxruntime-node: DIR is a copy of ../shared/bench/ort after `npm install
--ignore-scripts` (default: build/ort-bench, which bench/side_by_side.py
sets up). ref.js writes test_data_set_0/input_*.pb (deterministic: its
mulberry32 generator, floats in [-1, 1), integers in [0, 10)) and
output_*.pb (ONNX Runtime 1.30's results). The models and data are stored in
the repository; rerun this only to change or add a case.
"""
import argparse
import os
import shutil
import subprocess
import sys

import numpy as np
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
F, I64, I32, U8, B = TensorProto.FLOAT, TensorProto.INT64, TensorProto.INT32, TensorProto.UINT8, TensorProto.BOOL
# The IR version each opset came with (ONNX Runtime refuses an older one).
IR = {18: 8, 19: 9, 20: 9, 21: 10, 22: 10, 23: 11}

CASES = {}


def case(name, opset):
    def register(fn):
        CASES[name] = (opset, fn)
        return fn
    return register


def vi(name, elem, shape):
    return helper.make_tensor_value_info(name, elem, shape)


def i64(name, values):
    return numpy_helper.from_array(np.array(values, dtype=np.int64), name)


def f32(name, values, shape=None):
    a = np.array(values, dtype=np.float32)
    return numpy_helper.from_array(a.reshape(shape) if shape is not None else a, name)


def graph(nodes, inputs, outputs, inits=()):
    return helper.make_graph(nodes, "g", inputs, outputs, list(inits))


# ---- Reduce-18: axes is input 1 ------------------------------------------------------
for op in ["ReduceMax", "ReduceMin", "ReduceMean", "ReduceProd", "ReduceL1", "ReduceL2", "ReduceLogSum",
           "ReduceLogSumExp", "ReduceSumSquare"]:
    def build(op=op):
        nodes, src = [], "x"
        if op == "ReduceLogSum":  # a positive input
            nodes += [helper.make_node("Abs", ["x"], ["a"]), helper.make_node("Add", ["a", "half"], ["p"])]
            src = "p"
        nodes.append(helper.make_node(op, [src, "axes"], ["y"], keepdims=1))
        return graph(nodes, [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 1, 4])], [i64("axes", [1]), f32("half", 0.5)])
    case(f"{op.lower()}_axes_input", 18)(build)


@case("reducemax_keepdims0_opset20", 20)
def _():
    return graph([helper.make_node("ReduceMax", ["x", "axes"], ["y"], keepdims=0)],
                 [vi("x", F, [2, 3, 4])], [vi("y", F, [2, 3])], [i64("axes", [-1])])


@case("reducemean_noop_empty_axes", 18)
def _():
    return graph([helper.make_node("ReduceMean", ["x", "axes"], ["y"], noop_with_empty_axes=1)],
                 [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], [i64("axes", [])])


@case("reducesumsquare_all_opset21", 21)
def _():
    return graph([helper.make_node("ReduceSumSquare", ["x"], ["y"], keepdims=0)],
                 [vi("x", F, [2, 3, 4])], [vi("y", F, [])])


# ---- Split-18: num_outputs -------------------------------------------------------------
@case("split_num_outputs_even", 18)
def _():
    return graph([helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1, num_outputs=3)],
                 [vi("x", F, [2, 6])], [vi("a", F, [2, 2]), vi("b", F, [2, 2]), vi("c", F, [2, 2])])


@case("split_num_outputs_uneven", 18)
def _():
    return graph([helper.make_node("Split", ["x"], ["a", "b", "c"], axis=-1, num_outputs=3)],
                 [vi("x", F, [2, 7])], [vi("a", F, [2, 3]), vi("b", F, [2, 3]), vi("c", F, [2, 1])])


# ---- Pad-18 axes, Pad-19 wrap ------------------------------------------------------------
@case("pad_axes_constant", 18)
def _():
    return graph([helper.make_node("Pad", ["x", "pads", "v", "axes"], ["y"], mode="constant")],
                 [vi("x", F, [1, 2, 4, 5])], [vi("y", F, [1, 2, 7, 6])],
                 [i64("pads", [1, 0, 2, 1]), f32("v", 0.5), i64("axes", [2, 3])])


@case("pad_axes_reflect", 18)
def _():
    return graph([helper.make_node("Pad", ["x", "pads", "", "axes"], ["y"], mode="reflect")],
                 [vi("x", F, [2, 5])], [vi("y", F, [2, 8])], [i64("pads", [2, 1]), i64("axes", [-1])])


@case("pad_wrap", 19)
def _():
    return graph([helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap")],
                 [vi("x", F, [1, 1, 3, 4])], [vi("y", F, [1, 1, 6, 7])], [i64("pads", [0, 0, 1, 2, 0, 0, 2, 1])])


# ---- Resize-18/19 ---------------------------------------------------------------------------
@case("resize_axes_scales_linear", 18)
def _():
    return graph([helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear", axes=[2, 3])],
                 [vi("x", F, [1, 2, 4, 4])], [vi("y", F, [1, 2, 8, 6])], [f32("scales", [2.0, 1.5])])


@case("resize_not_larger_nearest", 18)
def _():
    return graph([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="nearest", axes=[2, 3],
                                   keep_aspect_ratio_policy="not_larger")],
                 [vi("x", F, [1, 1, 4, 6])], [vi("y", F, [1, 1, 6, 9])], [i64("sizes", [7, 9])])


@case("resize_not_smaller_linear", 18)
def _():
    return graph([helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear", axes=[2, 3],
                                   keep_aspect_ratio_policy="not_smaller")],
                 [vi("x", F, [1, 1, 4, 6])], [vi("y", F, [1, 1, 5, 8])], [i64("sizes", [5, 5])])


@case("resize_half_pixel_symmetric", 19)
def _():
    return graph([helper.make_node("Resize", ["x", "", "scales"], ["y"], mode="linear",
                                   coordinate_transformation_mode="half_pixel_symmetric")],
                 [vi("x", F, [1, 1, 4, 5])], [vi("y", F, [1, 1, 2, 8])], [f32("scales", [1, 1, 0.6, 1.7])])


# ---- Scatter reductions max / min (18) ---------------------------------------------------------
for red in ["max", "min"]:
    def build(red=red):
        idx = i64("idx", [[1, 0, 2, 1], [0, 2, 1, 1]])
        return graph([helper.make_node("ScatterElements", ["x", "idx", "u"], ["y"], axis=0, reduction=red)],
                     [vi("x", F, [3, 4]), vi("u", F, [2, 4])], [vi("y", F, [3, 4])], [idx])
    case(f"scatterelements_{red}", 18)(build)


@case("scatternd_max", 18)
def _():
    return graph([helper.make_node("ScatterND", ["x", "idx", "u"], ["y"], reduction="max")],
                 [vi("x", F, [4, 3]), vi("u", F, [3, 3])], [vi("y", F, [4, 3])], [i64("idx", [[2], [0], [2]])])


# ---- pools ---------------------------------------------------------------------------------
@case("averagepool_dilations", 19)
def _():
    return graph([helper.make_node("AveragePool", ["x"], ["y"], kernel_shape=[2, 2], dilations=[2, 2])],
                 [vi("x", F, [1, 1, 6, 6])], [vi("y", F, [1, 1, 4, 4])])


# ---- Cast, quantization ------------------------------------------------------------------------
@case("cast_saturate", 19)
def _():
    return graph([helper.make_node("Cast", ["x"], ["h"], to=TensorProto.FLOAT16, saturate=1),
                  helper.make_node("Cast", ["h"], ["y"], to=F)],
                 [vi("x", F, [3, 4])], [vi("y", F, [3, 4])])


@case("castlike_opset21", 21)
def _():
    return graph([helper.make_node("CastLike", ["x", "like"], ["y"])],
                 [vi("x", F, [3, 4])], [vi("y", TensorProto.DOUBLE, [3, 4])],
                 [numpy_helper.from_array(np.array([0.0], dtype=np.float64), "like")])


@case("quantize_dequantize_opset21", 21)
def _():
    zp = numpy_helper.from_array(np.array(128, dtype=np.uint8), "zp")
    return graph([helper.make_node("QuantizeLinear", ["x", "s", "zp"], ["q"]),
                  helper.make_node("DequantizeLinear", ["q", "s", "zp"], ["y"])],
                 [vi("x", F, [3, 4])], [vi("y", F, [3, 4])], [f32("s", 0.02), zp])


@case("quantize_output_dtype_int8", 21)
def _():
    return graph([helper.make_node("QuantizeLinear", ["x", "s"], ["q"], output_dtype=TensorProto.INT8),
                  helper.make_node("Cast", ["q"], ["y"], to=F)],
                 [vi("x", F, [3, 4])], [vi("y", F, [3, 4])], [f32("s", 0.01)])


# ---- new ops -------------------------------------------------------------------------------------
for approx in ["none", "tanh"]:
    def build(approx=approx):
        return graph([helper.make_node("Gelu", ["x"], ["y"], approximate=approx)],
                     [vi("x", F, [2, 5])], [vi("y", F, [2, 5])])
    case(f"gelu_{approx}", 20)(build)


@case("mish", 18)
def _():
    return graph([helper.make_node("Mish", ["x"], ["y"])], [vi("x", F, [2, 5])], [vi("y", F, [2, 5])])


for op in ["BitwiseAnd", "BitwiseOr", "BitwiseXor"]:
    def build(op=op):
        return graph([helper.make_node(op, ["a", "b"], ["y"])],
                     [vi("a", I32, [3, 4]), vi("b", I32, [4])], [vi("y", I32, [3, 4])])
    case(op.lower(), 18)(build)


@case("bitwisenot", 18)
def _():
    return graph([helper.make_node("BitwiseNot", ["a"], ["y"])], [vi("a", I32, [3, 4])], [vi("y", I32, [3, 4])])


@case("groupnormalization_18", 18)
def _():
    return graph([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2, epsilon=1e-5)],
                 [vi("x", F, [2, 4, 3, 3])], [vi("y", F, [2, 4, 3, 3])], [f32("s", [1.5, 0.5]), f32("b", [0.1, -0.2])])


@case("groupnormalization_21", 21)
def _():
    return graph([helper.make_node("GroupNormalization", ["x", "s", "b"], ["y"], num_groups=2)],
                 [vi("x", F, [2, 4, 3, 3])], [vi("y", F, [2, 4, 3, 3])],
                 [f32("s", [1.5, 0.5, 1.0, 2.0]), f32("b", [0.1, -0.2, 0.0, 0.3])])


@case("rmsnormalization", 23)
def _():
    return graph([helper.make_node("RMSNormalization", ["x", "s"], ["y"], axis=-1, epsilon=1e-5)],
                 [vi("x", F, [2, 3, 8])], [vi("y", F, [2, 3, 8])], [f32("s", np.linspace(0.5, 1.5, 8))])


for mode in ["linear", "nearest", "cubic"]:
    def build(mode=mode):
        return graph([helper.make_node("GridSample", ["x", "grid"], ["y"], mode=mode, align_corners=0)],
                     [vi("x", F, [1, 2, 4, 5]), vi("grid", F, [1, 3, 3, 2])], [vi("y", F, [1, 2, 3, 3])])
    case(f"gridsample_{mode}", 20)(build)


@case("dft_axis_input", 20)
def _():
    return graph([helper.make_node("DFT", ["x", "", "axis"], ["y"], onesided=0)],
                 [vi("x", F, [2, 8, 2])], [vi("y", F, [2, 8, 2])], [i64("axis", 1)])


# ---- versions that only widened types ---------------------------------------------------------
@case("shape_ops_opset21", 21)
def _():
    return graph([helper.make_node("Reshape", ["x", "s"], ["r"]),
                  helper.make_node("Transpose", ["r"], ["t"], perm=[1, 0]),
                  helper.make_node("Unsqueeze", ["t", "ax"], ["u"]),
                  helper.make_node("Squeeze", ["u", "ax"], ["q"]),
                  helper.make_node("Flatten", ["q"], ["f"], axis=1),
                  helper.make_node("Identity", ["f"], ["y"])],
                 [vi("x", F, [2, 3, 4])], [vi("y", F, [8, 3])], [i64("s", [3, 8]), i64("ax", [0])])


@case("conv_relu_maxpool_opset22", 22)
def _():
    w = f32("w", np.sin(np.arange(4 * 3 * 9)).astype(np.float32) * 0.3, [4, 3, 3, 3])
    return graph([helper.make_node("Conv", ["x", "w"], ["c"], pads=[1, 1, 1, 1]),
                  helper.make_node("Relu", ["c"], ["r"]),
                  helper.make_node("MaxPool", ["r"], ["y"], kernel_shape=[2, 2], strides=[2, 2])],
                 [vi("x", F, [1, 3, 8, 8])], [vi("y", F, [1, 4, 4, 4])], [w])


@case("mlp_softmax_opset23", 23)
def _():
    w = f32("w", np.cos(np.arange(6 * 4)).astype(np.float32) * 0.5, [6, 4])
    return graph([helper.make_node("MatMul", ["x", "w"], ["m"]),
                  helper.make_node("Add", ["m", "b"], ["a"]),
                  helper.make_node("Softmax", ["a"], ["y"], axis=-1)],
                 [vi("x", F, [3, 6])], [vi("y", F, [3, 4])], [w, f32("b", [0.1, 0.2, -0.1, 0.0])])


@case("isnan_isinf_opset20", 20)
def _():
    return graph([helper.make_node("Div", ["x", "x"], ["d"]),
                  helper.make_node("IsNaN", ["d"], ["n"]),
                  helper.make_node("IsInf", ["x"], ["i"]),
                  helper.make_node("Or", ["n", "i"], ["y"])],
                 [vi("x", F, [2, 5])], [vi("y", B, [2, 5])])


@case("constantofshape_opset21", 21)
def _():
    return graph([helper.make_node("ConstantOfShape", ["s"], ["c"], value=helper.make_tensor("v", F, [1], [1.5])),
                  helper.make_node("Add", ["x", "c"], ["y"])],
                 [vi("x", F, [2, 3])], [vi("y", F, [2, 3])], [i64("s", [2, 3])])


@case("equal_where_opset19", 19)
def _():
    return graph([helper.make_node("Greater", ["x", "zero"], ["g"]),
                  helper.make_node("Equal", ["g", "t"], ["e"]),
                  helper.make_node("Where", ["e", "x", "zero"], ["y"])],
                 [vi("x", F, [2, 5])], [vi("y", F, [2, 5])],
                 [f32("zero", 0.0), numpy_helper.from_array(np.array(True), "t")])


# ---- Resize-18 antialias: linear and cubic filters stretched when shrinking ----------------------
def resize_aa(mode, scales=None, sizes=None, **attrs):
    inputs = ["x", "", "scales"] if scales is not None else ["x", "", "", "sizes"]
    inits = [f32("scales", scales)] if scales is not None else [i64("sizes", sizes)]
    out = [1, 2, 9, 7] if sizes is None else sizes
    if scales is not None:
        out = [int(np.floor(d * s)) for d, s in zip([1, 2, 12, 10], scales)]
    return graph([helper.make_node("Resize", inputs, ["y"], mode=mode, antialias=1, **attrs)],
                 [vi("x", F, [1, 2, 12, 10])], [vi("y", F, out)], inits)


case("resize_antialias_linear_scales", 18)(lambda: resize_aa("linear", scales=[1, 1, 0.6, 0.45]))
case("resize_antialias_cubic_sizes", 18)(lambda: resize_aa("cubic", sizes=[1, 2, 5, 4]))
case("resize_antialias_cubic_exclude_outside", 18)(
    lambda: resize_aa("cubic", scales=[1, 1, 0.3, 0.5], exclude_outside=1, cubic_coeff_a=-0.5))
case("resize_antialias_linear_align_corners", 18)(
    lambda: resize_aa("linear", sizes=[1, 2, 4, 3], coordinate_transformation_mode="align_corners"))
# Growing dims are not filtered: the plain bilinear result.
case("resize_antialias_linear_upsample", 18)(lambda: resize_aa("linear", scales=[1, 1, 1.5, 2.0]))


# ---- new ops: CenterCropPad-18, Col2Im-18, AffineGrid-20, RotaryEmbedding-23 ---------------------
@case("centercroppad_axes", 18)
def _():  # dim 1 cropped 5 -> 3, dim 2 padded 4 -> 7 (odd: one more at the end)
    return graph([helper.make_node("CenterCropPad", ["x", "s"], ["y"], axes=[1, 2])],
                 [vi("x", F, [2, 5, 4])], [vi("y", F, [2, 3, 7])], [i64("s", [3, 7])])


@case("centercroppad_all_axes", 18)
def _():  # odd crop 6 -> 5 and even pad 3 -> 5
    return graph([helper.make_node("CenterCropPad", ["x", "s"], ["y"])],
                 [vi("x", F, [6, 3])], [vi("y", F, [5, 5])], [i64("s", [5, 5])])


@case("col2im_basic", 18)
def _():  # 2x2 blocks over a 4x5 image: 3 x 4 positions
    return graph([helper.make_node("Col2Im", ["x", "img", "blk"], ["y"])],
                 [vi("x", F, [1, 8, 12])], [vi("y", F, [1, 2, 4, 5])], [i64("img", [4, 5]), i64("blk", [2, 2])])


@case("col2im_strides_pads_dilations", 18)
def _():  # 6x7 image, 2x3 block, dilation 2, stride 2, pads 1: ((6+2-2-1)/2+1) x ((7+2-4-1)/2+1) = 3 x 3
    return graph([helper.make_node("Col2Im", ["x", "img", "blk"], ["y"], dilations=[2, 2], strides=[2, 2],
                                   pads=[1, 1, 1, 1])],
                 [vi("x", F, [2, 6, 9])], [vi("y", F, [2, 1, 6, 7])], [i64("img", [6, 7]), i64("blk", [2, 3])])


for align in [0, 1]:
    def build(align=align):
        return graph([helper.make_node("AffineGrid", ["theta", "size"], ["y"], align_corners=align)],
                     [vi("theta", F, [2, 2, 3])], [vi("y", F, [2, 4, 5, 2])], [i64("size", [2, 3, 4, 5])])
    case(f"affinegrid_2d_align{align}", 20)(build)


@case("affinegrid_3d", 20)
def _():
    return graph([helper.make_node("AffineGrid", ["theta", "size"], ["y"], align_corners=0)],
                 [vi("theta", F, [1, 3, 4])], [vi("y", F, [1, 2, 3, 4, 3])], [i64("size", [1, 1, 2, 3, 4])])


@case("rotaryembedding_4d_position_ids", 23)
def _():  # X [B, H, S, D] = [2, 2, 3, 8], caches [max_pos 12, 4], position_ids from the inputs (0..9)
    ang = np.outer(np.arange(12), 1.0 / (100.0 ** (np.arange(4) / 4)))
    return graph([helper.make_node("RotaryEmbedding", ["x", "cos", "sin", "pos"], ["y"])],
                 [vi("x", F, [2, 2, 3, 8]), vi("pos", I64, [2, 3])], [vi("y", F, [2, 2, 3, 8])],
                 [f32("cos", np.cos(ang), [12, 4]), f32("sin", np.sin(ang), [12, 4])])


@case("rotaryembedding_3d_interleaved_partial", 23)
def _():  # X [B, S, H*D] = [1, 4, 2*6], rotate 4 of each head's 6, caches per (b, s)
    ang = np.arange(1 * 4 * 2).reshape(1, 4, 2) * 0.37
    return graph([helper.make_node("RotaryEmbedding", ["x", "cos", "sin"], ["y"], interleaved=1, num_heads=2,
                                   rotary_embedding_dim=4)],
                 [vi("x", F, [1, 4, 12])], [vi("y", F, [1, 4, 12])],
                 [f32("cos", np.cos(ang), [1, 4, 2]), f32("sin", np.sin(ang), [1, 4, 2])])


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--ort", default=os.path.join(ROOT, "build", "ort-bench"))
    ap.add_argument("names", nargs="*")
    a = ap.parse_args()
    ref = os.path.join(a.ort, "ref.js")
    if not os.path.isfile(ref):
        sys.exit(f"make_models: {ref} not found (copy ../shared/bench/ort there and npm install --ignore-scripts)")
    for name, (opset, fn) in sorted(CASES.items()):
        if a.names and name not in a.names:
            continue
        d = os.path.join(HERE, name)
        shutil.rmtree(d, ignore_errors=True)
        os.makedirs(d)
        m = helper.make_model(fn(), opset_imports=[helper.make_opsetid("", opset)], producer_name="gec-tests")
        m.ir_version = IR[opset]
        with open(os.path.join(d, "model.onnx"), "wb") as f:
            f.write(m.SerializeToString())
        out = subprocess.run(["node", ref, d, "--runs", "1", "--warmup", "0"], capture_output=True, text=True)
        if out.returncode != 0:
            sys.exit(f"make_models: ONNX Runtime failed on {name}:\n{out.stderr[-2000:]}")
        print(f"{name}: opset {opset}")
    print(f"{len(CASES)} cases")


if __name__ == "__main__":
    main()
