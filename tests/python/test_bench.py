"""gec.bench() and gec.profile() return what `gec bench --json` and `gec
profile --json` print (same keys, same nodes). No timing is asserted beyond
the order of the statistics of one measurement."""

import json
import subprocess

import numpy as np
import pytest
from onnx import TensorProto, helper, numpy_helper

import gec
from conftest import CONV_OPTIONS, GEC_BINARY, MODELS, make_model, tensor

SQUEEZENET = MODELS / "squeezenet1_1" / "model.onnx"


def cli_json(*args):
    out = subprocess.run([GEC_BINARY, *map(str, args)], capture_output=True, text=True, check=True)
    return json.loads(out.stdout)


@pytest.fixture(scope="module")
def squeezenet_gom(tmp_path_factory):
    p = tmp_path_factory.mktemp("bench") / "sq.gom"
    gec.compile(SQUEEZENET, **CONV_OPTIONS).save(p)
    return p


def test_bench_has_the_cli_fields(squeezenet_gom):
    r = gec.bench(squeezenet_gom, warmup=1, iterations=5, threads=1)
    cli = cli_json("bench", squeezenet_gom, "--warmup", 1, "--iterations", 3, "--threads", 1, "--json")
    assert set(r) == set(cli)
    assert r["iterations"] == 5 and r["warmup"] == 1 and r["threads"] == 1 == cli["threads"]
    assert 0 < r["min_ms"] <= r["median_ms"] <= r["p90_ms"] <= r["p99_ms"] <= r["max_ms"]
    assert r["load_ms"] > 0 and r["first_run_ms"] > 0 and r["peak_rss_bytes"] > 0
    assert r["throughput_per_s"] == pytest.approx(1000 / r["median_ms"])


def test_bench_a_session_with_given_inputs(add_model):
    sess = gec.Session(add_model, threads=1)
    x = np.ones((2, 3), np.float32)
    r = gec.bench(sess, {"x": x, "y": x}, warmup=0, iterations=3)
    assert r["iterations"] == 3 and r["load_ms"] == pytest.approx(sess.load_ms)
    with pytest.raises(gec.InvalidArgument, match="input 'y'"):
        gec.bench(sess, {"x": x, "y": x.astype(np.float64)}, iterations=1)
    with pytest.raises(gec.InvalidArgument, match="iterations"):
        gec.bench(sess, iterations=0)
    with pytest.raises(gec.InvalidArgument, match="warmup"):
        gec.bench(sess, warmup=-1)
    with pytest.raises(gec.InvalidArgument, match="compile options"):
        gec.bench(sess, opt_level=1)


def test_generated_inputs_failure_says_how_to_fix():
    shape = numpy_helper.from_array(np.array([2, 3], np.int64), "shape")
    m = make_model([helper.make_node("Reshape", ["x", "shape"], ["y"], name="reshape0")],
                   [tensor("x", TensorProto.FLOAT, ["N"])], [tensor("y", TensorProto.FLOAT, [2, 3])],
                   initializers=[shape])
    with pytest.raises(gec.GecError) as e:
        gec.bench(m, iterations=1)
    assert "reshape0" in str(e.value) and "generated inputs" in str(e.value) and "input_shapes" in str(e.value)
    r = gec.bench(m, {"x": np.arange(6, dtype=np.float32)}, iterations=1)
    assert r["iterations"] == 1
    assert gec.bench(m, iterations=1, input_shapes={"x": [6]})["iterations"] == 1


def test_profile_matches_the_cli(squeezenet_gom, tmp_path):
    trace = tmp_path / "trace.json"
    p = gec.profile(squeezenet_gom, iterations=2, threads=1, trace=trace)
    cli = cli_json("profile", squeezenet_gom, "--iterations", 2, "--threads", 1, "--json")
    assert set(p) == set(cli) == {"iterations", "warmup", "tuning_runs", "threads", "total_ms", "nodes", "op_types"}
    assert [n["name"] for n in p["nodes"]] == [n["name"] for n in cli["nodes"]]
    assert [n["kernel"] for n in p["nodes"]] == [n["kernel"] for n in cli["nodes"]]
    assert set(p["nodes"][0]) == set(cli["nodes"][0])
    assert p["iterations"] == 2 and all(n["calls"] == 2 for n in p["nodes"])
    assert p["total_ms"] == pytest.approx(sum(n["mean_ms"] for n in p["nodes"]))
    assert sum(n["share"] for n in p["nodes"]) == pytest.approx(1.0)
    assert sum(o["nodes"] for o in p["op_types"]) == len(p["nodes"])
    assert [o["mean_ms"] for o in p["op_types"]] == sorted((o["mean_ms"] for o in p["op_types"]), reverse=True)
    conv = [n for n in p["nodes"] if n["op_type"] in ("Conv", "FusedConv")][0]
    assert conv["input_shapes"][0] == [1, 3, 224, 224]
    events = json.loads(trace.read_text())["traceEvents"]
    # One event per node call, in start order: the node order, once per run.
    assert [e["name"] for e in events] == [n["name"] for n in p["nodes"]] * 2
    assert [e["ts"] for e in events] == sorted(e["ts"] for e in events)


def test_profile_of_a_session_leaves_it_alone(add_model, tmp_path):
    sess = gec.Session(add_model)
    x = np.ones((2, 3), np.float32)
    p = gec.profile(sess, {"x": x, "y": x}, iterations=3)
    assert [n["op_type"] for n in p["nodes"]] == ["Add"] and p["nodes"][0]["calls"] == 3
    np.testing.assert_array_equal(sess.run(None, {"x": x, "y": x})[0], 2 * x)
    with pytest.raises(gec.IoError, match="no_dir"):
        gec.profile(sess, {"x": x, "y": x}, iterations=1, trace=tmp_path / "no_dir" / "t.json")
    with pytest.raises(gec.InvalidArgument, match="iterations"):
        gec.profile(sess, iterations=0)
