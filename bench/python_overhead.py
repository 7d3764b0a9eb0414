#!/usr/bin/python3
"""Per-call overhead of the Python binding: Session.run (Python call ->
numpy result) against the C++ API (Session::run timed in C++ by gec.bench,
same Session, same inputs), on a tiny model where the kernel time is
negligible; also gec.torch's callable (torch tensors in and out).

Usage: PYTHONPATH=build/python bench/python_overhead.py [--calls 20000] [--threads 1]

Prints a markdown table (microseconds per call, median of batches of 100
calls) and the load average it ran under. A benchmark, not a test: nothing
here is asserted.
"""

import argparse
import os
import statistics
import time

import numpy as np
import onnx
from onnx import TensorProto, helper

import gec


def tiny_model(n):
    """z = x + y, float32 [1, n]."""
    g = helper.make_graph([helper.make_node("Add", ["x", "y"], ["z"])], "tiny",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, n]),
                           helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, n])],
                          [helper.make_tensor_value_info("z", TensorProto.FLOAT, [1, n])])
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)
    onnx.checker.check_model(m)
    return m.SerializeToString()


def per_call_us(fn, calls, batch=100):
    """Median over batches of the mean time per call, microseconds."""
    for _ in range(min(calls, 1000)):  # warm-up
        fn()
    means = []
    for _ in range(max(1, calls // batch)):
        t0 = time.perf_counter_ns()
        for _ in range(batch):
            fn()
        means.append((time.perf_counter_ns() - t0) / batch / 1000)
    return statistics.median(means), min(means)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--calls", type=int, default=20000)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--elements", type=int, default=16)
    a = ap.parse_args()

    load_before = os.getloadavg()
    sess = gec.Session(tiny_model(a.elements), threads=a.threads)
    x = np.random.default_rng(0).standard_normal((1, a.elements)).astype(np.float32)
    y = np.ones((1, a.elements), np.float32)
    feed = {"x": x, "y": y}

    cpp = gec.bench(sess, feed, warmup=1000, iterations=a.calls)
    cpp_med_us, cpp_min_us = cpp["median_ms"] * 1000, cpp["min_ms"] * 1000
    py_med, py_min = per_call_us(lambda: sess.run(None, feed), a.calls)
    py_named_med, _ = per_call_us(lambda: sess.run(["z"], feed), a.calls)

    rows = [("C++ Session::run (gec.bench, timed in C++)", cpp_med_us, cpp_min_us),
            ("Python sess.run(None, feed)", py_med, py_min),
            ("Python sess.run(['z'], feed)", py_named_med, None)]

    try:
        import importlib

        import torch

        gec_torch = importlib.import_module("gec.torch")
        torch.set_num_threads(a.threads)
        lin = torch.nn.Linear(a.elements, a.elements).eval()
        xt = torch.rand(1, a.elements)
        fast = gec_torch.compile(lin, (xt,), threads=a.threads)
        t_med, t_min = per_call_us(lambda: fast(xt), a.calls)
        feed_t = {fast.input_names[0]: xt.numpy()}
        t_cpp = gec.bench(fast.session, feed_t, warmup=1000, iterations=a.calls)["median_ms"] * 1000
        with torch.no_grad():
            e_med, _ = per_call_us(lambda: lin(xt), a.calls)
        rows += [(f"C++ Session::run of Linear({a.elements},{a.elements})", t_cpp, None),
                 (f"gec.torch callable, Linear({a.elements},{a.elements})", t_med, t_min),
                 (f"torch eager Linear({a.elements},{a.elements}), no_grad", e_med, None)]
    except ImportError as e:
        print(f"(gec.torch skipped: {e})")

    load_after = os.getloadavg()
    print(f"tiny model: z = x + y, float32 [1,{a.elements}]; {a.threads} thread(s); {a.calls} calls each; "
          f"gec {gec.__version__}")
    print(f"load average before/after: {load_before[0]:.2f} / {load_after[0]:.2f} ({os.cpu_count()} CPUs)\n")
    print("| path | median us/call | min us/call |")
    print("|---|---:|---:|")
    for name, med, mn in rows:
        print(f"| {name} | {med:.2f} | {'' if mn is None else f'{mn:.2f}'} |")
    print(f"\nPython overhead per call (median): {py_med - cpp_med_us:.2f} us over the C++ API")


if __name__ == "__main__":
    main()
