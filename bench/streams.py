#!/usr/bin/python3
"""Streams and concurrent requests, side by side with ONNX Runtime, in one run.

  /usr/bin/python3 bench/streams.py [MODEL_DIR ...] [--threads 2] [--runs 40]

For each model (default: every folder of ../shared/models), compiled at -O2
with test_data_set_0's input shapes (so the stream estimate has shapes):
  - latency (median ms of `gec bench`) at --streams 1, auto and 2;
  - throughput (runs/s) at --concurrency 1, 2 and 4 (threads per request =
    threads / K, at least 1), against ONNX Runtime with the same number of
    requests in flight, the better of one session in 'parallel' mode and K
    sessions (bench/ort_throughput.js).
Prints a markdown table. Benchmark alone: two cores, any other load is noise.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import side_by_side as sbs  # noqa: E402  (its ORT set-up and input shapes)


def gec_bench(gec, gom, model_dir, threads, runs, concurrency=1):
    out = subprocess.run([gec, "bench", gom, "--input-dir", os.path.join(model_dir, "test_data_set_0"),
                          "--threads", str(threads), "--iterations", str(runs), "--warmup", "5",
                          "--concurrency", str(concurrency), "--json"], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("gec bench failed: " + out.stdout[-300:] + out.stderr[-300:])
    return json.loads(out.stdout)


def compile_with(gec, model_dir, gom, streams):
    cmd = [gec, "compile", os.path.join(model_dir, "model.onnx"), "-o", gom, "--streams", streams,
           "--report", gom + ".json"] + sbs.input_shapes(model_dir)
    subprocess.run(cmd, check=True, capture_output=True)
    with open(gom + ".json") as f:
        return json.load(f)["streams"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("models", nargs="*")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--runs", type=int, default=40)
    ap.add_argument("--gec", default=os.path.join(HERE, "..", "build", "gec"))
    a = ap.parse_args()
    models = a.models or sorted(os.path.join(sbs.SHARED, "models", d) for d in os.listdir(os.path.join(sbs.SHARED, "models"))
                                if os.path.isdir(os.path.join(sbs.SHARED, "models", d)))
    ortdir = sbs.ensure_ort(os.path.join(HERE, "..", "build", "ort-bench"))
    shutil.copy(os.path.join(HERE, "ort_throughput.js"), ortdir)
    print(f"load average at start: {os.getloadavg()[0]:.2f}; {a.threads} threads, {a.runs} runs per measurement\n")
    print("| model | auto streams | ms @1 stream | ms @auto | ms @2 streams | arena 1 / 2 streams (KiB) "
          "| gec runs/s K=1 / 2 / 4 | ORT runs/s K=1 / 2 / 4 | gec/ORT throughput K=1 / 2 / 4 |")
    print("|---|---|---|---|---|---|---|---|---|")
    tmp = tempfile.mkdtemp()
    for m in models:
        name = os.path.basename(os.path.normpath(m))
        sbs.progress(name)
        goms, info = {}, {}
        for s in ("1", "auto", "2"):
            goms[s] = os.path.join(tmp, f"{name}_{s}.gom")
            info[s] = compile_with(a.gec, m, goms[s], s)
        lat = {s: gec_bench(a.gec, goms[s], m, a.threads, a.runs)["median_ms"] for s in goms}
        g_tp, o_tp = [], []
        for k in (1, 2, 4):
            g_tp.append(gec_bench(a.gec, goms["auto"], m, max(1, a.threads // k), a.runs, k)["runs_per_s"])
            out = subprocess.run(["node", "ort_throughput.js", os.path.abspath(m), str(k), str(a.runs), str(a.threads)],
                                 cwd=ortdir, capture_output=True, text=True)
            if out.returncode != 0:
                raise RuntimeError("ORT failed: " + out.stderr[-300:])
            r = json.loads(out.stdout)
            o_tp.append(max(r["one_session"]["runs_per_s"], r.get("k_sessions", {"runs_per_s": 0})["runs_per_s"]))
        f = lambda xs: " / ".join(f"{x:.0f}" for x in xs)
        print(f"| {name} | {info['auto']['count']} | {lat['1']:.3f} | {lat['auto']:.3f} | {lat['2']:.3f} | "
              f"{info['1']['arena_bytes'] // 1024} / {info['2']['arena_bytes'] // 1024} | {f(g_tp)} | {f(o_tp)} | "
              + " / ".join(f"{g / o:.2f}" for g, o in zip(g_tp, o_tp)) + " |", flush=True)
    shutil.rmtree(tmp)
    print(f"\nload average at end: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    main()
