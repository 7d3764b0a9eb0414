#!/usr/bin/python3
"""What the optimizer buys: gec -O0 against -O3, and -O3 against ONNX Runtime,
measured side by side in one run.

For each model folder (backend-test layout), compiles at -O0 and -O3 (input
shapes fixed to test_data_set_0's, as bench/side_by_side.py does), then runs
`gec bench` at both levels and ONNX Runtime alternately for --rounds rounds,
and prints a markdown table: compile ms (process start included), median
latency, peak RSS and activation arena at each level, the -O0/-O3 ratios, and
-O3/ORT. ORT's peak RSS is given minus Node.js's own RSS before the session
(what the ONNX Runtime session adds), so both columns count the engine.

Usage: bench/opt_levels.py [MODEL_DIR ...] [--threads 2] [--rounds 3] [--runs 20] [--warmup 5]
Default models: resnet50, bert_like_encoder and ppocr_v4_det of ../shared/models.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import side_by_side as sbs  # noqa: E402


def compile_with_report(gec, md, gom, level):
    report = gom + ".json"
    ms = sbs.compile_gec(gec, md, gom, level, True, ["--report", report])
    with open(report) as f:
        r = json.load(f)
    return ms, r["memory"]["arena_bytes"]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("models", nargs="*")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--gec", default=os.path.join(sbs.ROOT, "build", "gec"))
    a = ap.parse_args()
    models = a.models or [os.path.join(sbs.SHARED, "models", m) for m in ("resnet50", "bert_like_encoder", "ppocr_v4_det")]
    if not os.access(a.gec, os.X_OK):
        sys.exit(f"bench: {a.gec} not found: build first")
    ortdir = sbs.ensure_ort(os.path.join(sbs.ROOT, "build", "ort-bench"))
    tmp = tempfile.mkdtemp(prefix="gec-opt-levels-")
    med = lambda xs, k: statistics.median(x[k] for x in xs)
    rows = []
    for i, md in enumerate(models):
        name = os.path.basename(os.path.normpath(md))
        goms, compile_ms, arena = {}, {}, {}
        for lvl in ("-O0", "-O3"):
            sbs.progress(f"[{i + 1}/{len(models)}] {name}: compiling {lvl}")
            goms[lvl] = os.path.join(tmp, f"{name}{lvl}.gom")
            compile_ms[lvl], arena[lvl] = compile_with_report(a.gec, md, goms[lvl], lvl)
        runs = {"-O0": [], "-O3": [], "ort": []}
        for r in range(a.rounds):
            for k in runs:
                sbs.progress(f"[{i + 1}/{len(models)}] {name}: round {r + 1}/{a.rounds} {k}")
                if k == "ort":
                    runs[k].append(sbs.run_ort(ortdir, md, a.threads, a.runs, a.warmup))
                else:
                    runs[k].append(sbs.run_gec_bench(a.gec, goms[k], md, a.threads, a.runs, a.warmup))
        lat = {k: med(v, "median_ms") for k, v in runs.items()}
        rss = {k: max(x["peak_rss_bytes"] for x in runs[k]) / 1048576 for k in ("-O0", "-O3")}
        ort_rss = max(x["peak_rss_mb"] - x["rss_before_session_mb"] for x in runs["ort"])  # per round
        rows.append(
            f"| {name} | {compile_ms['-O0']:.0f} / {compile_ms['-O3']:.0f} | {lat['-O0']:.2f} / {lat['-O3']:.2f} / "
            f"{lat['ort']:.2f} | **{lat['-O0'] / lat['-O3']:.2f}x** | **{lat['-O3'] / lat['ort']:.2f}** | "
            f"{rss['-O0']:.0f} / {rss['-O3']:.0f} / {ort_rss:.0f} | {rss['-O3'] / rss['-O0']:.2f} | "
            f"{arena['-O0'] / 1024:.0f} / {arena['-O3'] / 1024:.0f} | {arena['-O3'] / max(arena['-O0'], 1):.2f} |")
    sbs.progress("")
    print(f"gec -O0 vs -O3 vs ONNX Runtime 1.30, {a.threads} threads, {a.rounds} rounds of {a.runs} timed runs "
          f"after {a.warmup} warm-up (medians of the rounds); ORT RSS minus Node.js's own\n\n"
          "| model | compile ms -O0 / -O3 | median ms -O0 / -O3 / ORT | speed-up -O0/-O3 | -O3/ORT | "
          "peak RSS MB -O0 / -O3 / ORT | RSS -O3/-O0 | arena KiB -O0 / -O3 | arena -O3/-O0 |\n"
          "|---|---|---|---|---|---|---|---|---|")
    print("\n".join(rows))
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
