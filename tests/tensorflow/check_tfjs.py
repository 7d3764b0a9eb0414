#!/usr/bin/python3
"""The TensorFlow.js path on real models: writes each ../shared/tf_models
GraphDef as a tfjs graph model (model.json: the GraphDef in protobuf's JSON
mapping with the Const values moved into a weight shard, as
tensorflowjs_converter lays it out), twice:

  1. float32 weights: `gec test` must pass against the folder's TensorFlow.js
     references exactly as the .pb does;
  2. weights quantized to uint8 (per weight: scale = (max - min) / 255,
     value = q * scale + min, tfjs's affine quantization): gec's output on
     that model.json must equal its output on a .pb whose Consts hold the
     dequantized values computed here with numpy (so the dequantization of
     the frontend is checked against an independent one).

    check_tfjs.py --gec build/gec --protoc protoc --models ../shared/tf_models --work DIR
"""
import argparse
import json
import os
import shutil
import subprocess
import sys

import numpy as np


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gec", required=True)
    ap.add_argument("--protoc", required=True)
    ap.add_argument("--proto", required=True, help="src/frontend/tensorflow/tf_graph.proto")
    ap.add_argument("--models", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--atol", default="3e-3")
    a = ap.parse_args()
    shutil.rmtree(a.work, ignore_errors=True)
    os.makedirs(a.work)
    subprocess.run([a.protoc, "--python_out", a.work, "-I", os.path.dirname(a.proto), a.proto], check=True)
    sys.path.insert(0, a.work)
    import tf_graph_pb2 as T
    from google.protobuf import json_format

    np_of = {T.DT_FLOAT: np.float32, T.DT_INT32: np.int32, T.DT_BOOL: np.bool_, T.DT_INT64: np.int64}
    name_of = {T.DT_FLOAT: "float32", T.DT_INT32: "int32", T.DT_BOOL: "bool"}
    failures = 0
    names = sorted(d for d in os.listdir(a.models) if os.path.isfile(os.path.join(a.models, d, "model.pb")))
    for name in names:
        src = os.path.join(a.models, name)
        gd = T.GraphDef()
        with open(os.path.join(src, "model.pb"), "rb") as f:
            gd.ParseFromString(f.read())
        for quantize in (False, True):
            out = os.path.join(a.work, name + ("_uint8" if quantize else ""))
            os.makedirs(out)
            g = T.GraphDef()
            g.CopyFrom(gd)
            shard, weights = bytearray(), []
            deq = T.GraphDef()
            deq.CopyFrom(gd)
            deq_nodes = {n.name: n for n in deq.node}
            for n in g.node:
                if n.op != "Const":
                    continue
                t = n.attr["value"].tensor
                if t.dtype not in name_of or not t.tensor_content:
                    continue  # small typed-field constants stay inline, as tfjs keeps some
                shape = [d.size for d in t.tensor_shape.dim]
                arr = np.frombuffer(t.tensor_content, dtype=np_of[t.dtype]).reshape(shape)
                w = {"name": n.name, "shape": shape, "dtype": name_of[t.dtype]}
                if quantize and t.dtype == T.DT_FLOAT and arr.size > 16:
                    lo, hi = float(arr.min()), float(arr.max())
                    scale = (hi - lo) / 255 if hi > lo else 1.0
                    q = np.clip(np.round((arr - lo) / scale), 0, 255).astype(np.uint8)
                    w["quantization"] = {"dtype": "uint8", "scale": scale, "min": lo}
                    shard += q.tobytes()
                    back = (q.astype(np.float64) * scale + lo).astype(np.float32)
                    deq_nodes[n.name].attr["value"].tensor.tensor_content = back.tobytes()
                else:
                    shard += arr.tobytes()
                weights.append(w)
                n.attr["value"].Clear()  # the value now lives in the shard
            topo = json_format.MessageToDict(g)
            model = {"format": "graph-model", "generatedBy": "check_tfjs.py", "convertedBy": "check_tfjs.py",
                     "modelTopology": topo,
                     "weightsManifest": [{"paths": ["group1-shard1of1.bin"], "weights": weights}]}
            with open(os.path.join(out, "model.json"), "w") as f:
                json.dump(model, f)
            with open(os.path.join(out, "group1-shard1of1.bin"), "wb") as f:
                f.write(shard)
            sets = os.path.abspath(os.path.join(src, "test_data_set_0"))
            if not quantize:
                os.symlink(sets, os.path.join(out, "test_data_set_0"))
                r = subprocess.run([a.gec, "test", "-O", "0", "-O", "3", "--atol", a.atol, out],
                                   capture_output=True, text=True)
                ok = r.returncode == 0
                print(f"{name}: model.json (float32 weights) vs TensorFlow.js reference: {'PASS' if ok else 'FAIL'}")
                if not ok:
                    print(r.stdout + r.stderr)
                    failures += 1
                continue
            with open(os.path.join(out, "dequantized.pb"), "wb") as f:
                f.write(deq.SerializeToString())
            outs = []
            for model_file in ("model.json", "dequantized.pb"):
                d = os.path.join(out, "out_" + model_file.split(".")[0])
                # One thread for both: the outputs are compared bit for bit,
                # and a gemm-based product sums in another order on another
                # thread count (the default count follows the machine's load).
                r = subprocess.run([a.gec, "run", os.path.join(out, model_file), "--input-dir", sets,
                                    "--output-dir", d, "--format", "npy", "--threads", "1"],
                                   capture_output=True, text=True)
                if r.returncode != 0:
                    print(r.stdout + r.stderr)
                    failures += 1
                    break
                outs.append([np.load(os.path.join(d, f)) for f in sorted(os.listdir(d))])
            else:
                same = len(outs[0]) == len(outs[1]) and all(np.array_equal(x, y) for x, y in zip(*outs))
                print(f"{name}: uint8-quantized model.json vs the numpy-dequantized .pb: "
                      f"{'identical' if same else 'DIFFERENT'} ({len(weights)} weights, {len(shard)} shard bytes)")
                failures += 0 if same else 1
    print(f"{len(names)} models, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
