#!/usr/bin/python3
"""Side-by-side benchmark of GraphEngine against ONNX Runtime on this machine.

For each model folder (backend-test layout: model.onnx + test_data_set_0/),
runs ONNX Runtime (the pinned onnxruntime-node of ../shared/bench/ort: CPU,
same thread count, all graph optimizations, sequential) and `gec bench`,
alternating A/B/A/B for --rounds rounds in one run, and prints a markdown
table: median and p90 latency of both and the ratio gec/ORT, peak RSS of both
and the ratio, ORT session-creation time next to `gec compile` time and
`.gom` load time, the time to a first answer (ORT: session creation + first
run; gec: .gom load + first run) and its ratio, and the max abs error of gec against ORT's outputs (the
stored reference outputs come from ORT 1.30). The geometric mean of the
latency ratios closes the table.

With --baseline OTHER_GEC (e.g. a build of an earlier commit), the same
rounds also run that build (ORT / gec / baseline in turn) and the table adds
its median, the ratio gec/baseline and the spread of gec's round medians
(max - min over their median: what one round-to-round difference is worth on
this machine at this moment), with a geometric mean of gec/baseline and of
the compile times. --baseline-flags "FLAGS" compiles the baseline with extra
flags (without --baseline: this gec), e.g. "--disable-pass autofusion
--disable-pass attention" for an A/B of a pass in one run.

Usage: bench/side_by_side.py [MODEL_DIR ...] [--threads 2] [--rounds 3]
       [--runs 20] [--warmup 5] [--gec build/gec] [--baseline GEC] [--out bench/results.md] [--dynamic]
       [--busy] [--peak] [--interval-ms T]
With --busy, a `yes` pinned to CPU 0 runs throughout (both engines meet the
same competitor): how latency degrades on a busy machine. With
--interval-ms T both engines wait T ms before each timed run (ORT through
a patched copy of ref.js): the latency of requests that arrive
apart, whose idle threads have gone to sleep.

With --peak, build/peak_fp32 (next to the gec binary) measures this CPU's
float32 multiply-add peak at --threads threads after every round, and a
second table gives each model's dense-op FLOPs per run (`gec profile`'s
count: convolutions, ConvTranspose, MatMuls, Gemms and attention, a
Winograd convolution counted as the direct one), the rate both engines reach at their
median latency, and those rates as a share of the peak measured in the
same run: on a shared virtual machine the peak moves with the host (511 to
675 GFLOP/s on 2 threads seen here), so a share of a figure taken at
another time says little.

With --tf, the folders hold TensorFlow models (model.pb, default: every
folder of ../shared/tf_models, references from TensorFlow.js): gec compiles
the .pb; ONNX Runtime runs the same model as ONNX, written by gec's own
exporter from the graph as imported, before any pass (`gec compile -O0
--dump-graph`: 00_input.onnx), so ONNX Runtime optimizes it itself. The error
columns then give both engines against the TensorFlow.js reference.
Default models: every folder of ../shared/models.
Needs node + npm (onnxruntime-node is installed with --ignore-scripts into
build/ort-bench on first use). Peak RSS of ORT includes Node.js itself
(about 50 MB); the table also shows ORT's RSS before session creation,
and gec's peak against ORT's minus that (ORT's session without Node.js;
gec's figure keeps its whole process), and both less what their process
held before the model: gec's resident set before the load (the program and
its libraries) against ORT's before the session (Node.js with
onnxruntime-node loaded). gec reports VmHWM, its own address
space's peak; Node.js's maxRSS is getrusage's, which Linux carries over
exec from this script, smaller than Node.js itself.
"""
import argparse
import json
import math
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SHARED = os.path.join(os.path.dirname(ROOT), "shared")


def progress(msg):
    if sys.stderr.isatty():
        sys.stderr.write("\r\033[K" + msg)
        sys.stderr.flush()


def ensure_ort(workdir):
    src = os.path.join(SHARED, "bench", "ort")
    if not os.path.isdir(src):
        sys.exit(f"bench: {src} is missing (the shared folder must sit next to the repository)")
    if not os.path.isdir(os.path.join(workdir, "node_modules", "onnxruntime-node")):
        os.makedirs(workdir, exist_ok=True)
        for f in os.listdir(src):
            shutil.copy(os.path.join(src, f), workdir)
        subprocess.run(["npm", "install", "--ignore-scripts", "--no-audit", "--no-fund", "--silent"],
                       cwd=workdir, check=True)
    return workdir


ORT_TIMED_LOOP = "  for (let i = 0; i < runs; i++) {\n"


def run_ort(ortdir, model_dir, threads, runs, warmup, interval_ms=0):
    # ref.js pins 2 intra-op threads and runs back to back; patch a copy when
    # another count or a wait before each timed run is asked.
    script = os.path.join(ortdir, "ref.js")
    if threads != 2 or interval_ms:
        patched = os.path.join(ortdir, f"ref_t{threads}_i{interval_ms:g}.js")
        # Made again whenever ref.js is newer (an updated ref.js must not be shadowed by a stale copy).
        if not os.path.exists(patched) or os.path.getmtime(patched) < os.path.getmtime(script):
            with open(script) as f:
                text = f.read().replace("intraOpNumThreads: 2", f"intraOpNumThreads: {threads}")
            if interval_ms:
                if ORT_TIMED_LOOP not in text:
                    sys.exit(f"bench: {script} has no timed loop to add --interval-ms to")
                text = text.replace(ORT_TIMED_LOOP, ORT_TIMED_LOOP +
                                    f"    await new Promise((r) => setTimeout(r, {interval_ms:g}));\n")
            with open(patched, "w") as f:
                f.write(text)
        script = patched
    out = subprocess.run(["node", script, os.path.abspath(model_dir), "--check", "--runs", str(runs),
                          "--warmup", str(warmup)], cwd=ortdir, capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("ORT failed: " + out.stderr.strip()[-500:])
    return json.loads(out.stdout)


def run_gec_bench(gec, gom, model_dir, threads, runs, warmup, interval_ms=0):
    out = subprocess.run([gec, "bench", gom, "--input-dir", os.path.join(model_dir, "test_data_set_0"),
                          "--threads", str(threads), "--iterations", str(runs), "--warmup", str(warmup), "--json"] +
                         (["--interval-ms", f"{interval_ms:g}"] if interval_ms else []),
                         capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("gec bench failed: " + out.stdout[-300:] + out.stderr[-300:])
    return json.loads(out.stdout)


def measure_peak(gec, threads):
    """GFLOP/s of bench/peak_fp32 at `threads` threads (it runs 0.5 s at each count 1..threads), or None."""
    exe = os.path.join(os.path.dirname(os.path.abspath(gec)), "peak_fp32")
    if not os.access(exe, os.X_OK):
        return None
    out = subprocess.run([exe, str(threads), "0.5"], capture_output=True, text=True).stdout
    m = re.search(rf"^\s*{threads} threads?: ([0-9.]+) GFLOP/s", out, re.M)
    return float(m.group(1)) if m else None


def dense_flops(gec, gom, model_dir, threads):
    """FLOPs per run of the dense ops, as `gec profile` counts them (one run)."""
    out = subprocess.run([gec, "profile", gom, "--input-dir", os.path.join(model_dir, "test_data_set_0"),
                          "--threads", str(threads), "--iterations", "1", "--warmup", "0", "--json"],
                         capture_output=True, text=True)
    if out.returncode != 0:
        return None
    return sum(n.get("flops") or 0 for n in json.loads(out.stdout)["nodes"])


def input_shapes(model_dir):
    """--input-shape flags with the shapes of test_data_set_0's inputs."""
    import onnx  # Debian's python3-onnx
    from onnx import numpy_helper
    flags, k = [], 0
    while True:
        f = os.path.join(model_dir, "test_data_set_0", f"input_{k}.pb")
        if not os.path.exists(f):
            return flags
        t = onnx.TensorProto()
        with open(f, "rb") as fh:
            t.ParseFromString(fh.read())
        flags += ["--input-shape", t.name + ":" + ",".join(str(d) for d in t.dims)]
        k += 1


def model_file(model_dir):
    for name in ("model.onnx", "model.pb", "model.json"):
        if os.path.exists(os.path.join(model_dir, name)):
            return os.path.join(model_dir, name)
    raise RuntimeError(f"{model_dir}: no model.onnx, model.pb or model.json")


def onnx_export(gec, model_dir, tmp):
    """A backend-test folder for ORT: gec's ONNX export of the imported (not
    optimized) graph, the inputs, and the reference outputs in the export's
    output order (references are matched by name)."""
    import onnx  # Debian's python3-onnx
    name = os.path.basename(os.path.normpath(model_dir))
    dump = os.path.join(tmp, name + ".dump")
    out = subprocess.run([gec, "compile", model_file(model_dir), "-O0", "-o", os.path.join(tmp, name + ".O0.gom"),
                          "--dump-graph", dump], capture_output=True, text=True)
    if out.returncode != 0:
        raise RuntimeError("gec compile --dump-graph failed: " + out.stderr.strip()[-300:])
    folder = os.path.join(tmp, name + ".onnx")
    sets = os.path.join(folder, "test_data_set_0")
    os.makedirs(sets)
    shutil.copy(os.path.join(dump, "00_input.onnx"), os.path.join(folder, "model.onnx"))
    src = os.path.join(model_dir, "test_data_set_0")
    refs = {}
    for f in sorted(os.listdir(src)):
        if f.startswith("input_"):
            shutil.copy(os.path.join(src, f), os.path.join(sets, f))
        elif f.startswith("output_"):
            t = onnx.TensorProto()
            with open(os.path.join(src, f), "rb") as fh:
                t.ParseFromString(fh.read())
            refs[t.name] = os.path.join(src, f)
    m = onnx.load(os.path.join(folder, "model.onnx"), load_external_data=False)
    for k, o in enumerate(m.graph.output):
        if o.name not in refs:
            raise RuntimeError(f"the export's output {o.name} has no reference")
        shutil.copy(refs[o.name], os.path.join(sets, f"output_{k}.pb"))
    return folder


def compile_gec(gec, model_dir, gom, opt, static, flags=()):
    extra = (input_shapes(model_dir) if static else []) + list(flags)
    t0 = time.perf_counter()
    out = subprocess.run([gec, "compile", model_file(model_dir), "-o", gom, opt] + extra,
                         capture_output=True, text=True)
    ms = (time.perf_counter() - t0) * 1000
    if out.returncode != 0:
        raise RuntimeError("gec compile failed: " + out.stderr.strip())
    return ms


def gec_error(gec, model_dir, threads, atol="1e-4"):
    out = subprocess.run([gec, "test", model_dir, "--threads", str(threads), "--atol", atol],
                         capture_output=True, text=True)
    m = re.search(r"max abs err ([0-9.eE+-]+)", out.stdout)
    if out.returncode != 0 or not m:
        worst = re.search(r"max abs error ([0-9.eE+-]+)", out.stdout)
        if worst:  # outside the tolerance: say by how much
            return None, f"{float(worst.group(1)):.2g} (> atol {atol})"
        return None, out.stdout.strip().splitlines()[0] if out.stdout.strip() else out.stderr.strip()
    return float(m.group(1)), ""


def fmt(x, digits=2):
    return "n/a" if x is None else f"{x:.{digits}f}"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("models", nargs="*")
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=5)
    ap.add_argument("--opt", default="-O3")
    ap.add_argument("--gec", default=os.path.join(ROOT, "build", "gec"))
    ap.add_argument("--baseline", default=None, help="another gec binary benchmarked in the same rounds")
    ap.add_argument("--baseline-flags", default="",
                    help="extra compile flags for the baseline (e.g. \"--disable-pass autofusion\"); "
                         "without --baseline the baseline is this gec compiled with them")
    ap.add_argument("--out", default=None, help="also write the table to this file")
    ap.add_argument("--dynamic", action="store_true",
                    help="compile models with dynamic input dims as they are (default: fix them to the test data's "
                         "shapes with --input-shape, as an offline compiler is used in deployment)")
    ap.add_argument("--tf", action="store_true",
                    help="TensorFlow models (model.pb): ORT runs gec's ONNX export of the imported graph")
    ap.add_argument("--peak", action="store_true",
                    help="measure the fp32 peak (build/peak_fp32) after every round and add a table of each "
                         "engine's dense-op GFLOP/s as a share of it")
    ap.add_argument("--interval-ms", type=float, default=0,
                    help="both engines wait this long before each timed run (requests that arrive "
                         "apart, as a service's do: idle threads have gone to sleep)")
    ap.add_argument("--busy", action="store_true",
                    help="keep a CPU-bound competitor (yes > /dev/null, pinned to CPU 0 with taskset) running during "
                         "every timed run of both engines")
    a = ap.parse_args()
    if a.interval_ms and not 1 <= a.interval_ms <= 60000:
        # Node's setTimeout waits at least 1 ms: below that the engines would wait differently.
        ap.error("--interval-ms must be 0 or 1..60000")
    if a.baseline_flags and not a.baseline:
        a.baseline = a.gec
    competitor = None
    if a.busy:
        competitor = subprocess.Popen(["taskset", "-c", "0", "yes"], stdout=subprocess.DEVNULL)
        time.sleep(1)
    try:
        table(a)
    finally:
        if competitor:
            competitor.kill()


def table(a):
    kind = "tf_models" if a.tf else "models"
    marker = "model.pb" if a.tf else "model.onnx"
    models = a.models or sorted(os.path.join(SHARED, kind, d) for d in os.listdir(os.path.join(SHARED, kind))
                                if os.path.isfile(os.path.join(SHARED, kind, d, marker)))
    if not os.access(a.gec, os.X_OK):
        sys.exit(f"bench: {a.gec} not found: build first (cmake -S . -B build -G Ninja && ninja -C build gec)")
    ortdir = ensure_ort(os.path.join(ROOT, "build", "ort-bench"))
    tmp = tempfile.mkdtemp(prefix="gec-bench-")
    rows, ratios, base_ratios, compile_ratios = [], [], [], []
    peak_rows, peaks_all = [], []
    for i, md in enumerate(models):
        name = os.path.basename(os.path.normpath(md))
        progress(f"[{i + 1}/{len(models)}] {name}: compiling")
        gom = os.path.join(tmp, name + ".gom")
        try:
            # TensorFlow: input shapes are the graph's (unknown dims become 1 at import).
            compile_ms = compile_gec(a.gec, md, gom, a.opt, not a.dynamic and not a.tf)
            ort_md = onnx_export(a.gec, md, tmp) if a.tf else md
            base_gom = os.path.join(tmp, name + ".base.gom")
            base_compile_ms = (compile_gec(a.baseline, md, base_gom, a.opt, not a.dynamic, a.baseline_flags.split())
                               if a.baseline else None)
            ort, gec, base, peaks = [], [], [], []
            engines = [("ORT", ort, lambda: run_ort(ortdir, ort_md, a.threads, a.runs, a.warmup, a.interval_ms)),
                       ("gec", gec, lambda: run_gec_bench(a.gec, gom, md, a.threads, a.runs, a.warmup,
                                                          a.interval_ms))]
            if a.baseline:
                engines.append(("baseline", base,
                                lambda: run_gec_bench(a.baseline, base_gom, md, a.threads, a.runs, a.warmup,
                                                      a.interval_ms)))
            # A/B/A/B (A/B/C with a baseline) in one run, each round starting
            # with the next engine: one that always ran right after another
            # (and its heat, its freed memory) would be measured unlike the rest.
            for r in range(a.rounds):
                for k in range(len(engines)):
                    label, results, run = engines[(r + k) % len(engines)]
                    progress(f"[{i + 1}/{len(models)}] {name}: round {r + 1}/{a.rounds} {label}")
                    results.append(run())
                if a.peak:
                    progress(f"[{i + 1}/{len(models)}] {name}: round {r + 1}/{a.rounds} peak")
                    peaks.append(measure_peak(a.gec, a.threads))
            err, why = gec_error(a.gec, md, a.threads, "3e-3" if a.tf else "1e-4")
        except Exception as e:  # a failing model is a row, not the end of the table
            # As many cells as the header: 17, one more with --tf, four more with --baseline.
            rows.append(f"| {name} | failed: {str(e)[:120]} |" + " |" * (15 + (1 if a.tf else 0) + (4 if a.baseline else 0)))
            continue
        med = lambda xs, k: statistics.median(x[k] for x in xs)
        # Time to the first answer: ORT's session creation + first run, gec's .gom load + first run.
        cold = lambda xs, k: statistics.median(x[k] + x["first_run_ms"] for x in xs)
        o_med, g_med = med(ort, "median_ms"), med(gec, "median_ms")
        o_p90, g_p90 = med(ort, "p90_ms"), med(gec, "p90_ms")
        o_rss = max(x["peak_rss_mb"] for x in ort)
        o_base = min(x["rss_before_session_mb"] for x in ort)
        # ORT's session alone: per round, its peak less its RSS before the session.
        o_session = max(x["peak_rss_mb"] - x["rss_before_session_mb"] for x in ort)
        g_rss = max(x["peak_rss_bytes"] for x in gec) / 1048576
        # Both engines less their process before the model (gec: the program
        # and its libraries; ORT: Node.js with onnxruntime-node loaded), per
        # round; n/a from a gec without rss_before_load_bytes.
        g_model = max((x["peak_rss_bytes"] - x.get("rss_before_load_bytes", 0)) / 1048576 for x in gec)
        both_less = (f"{g_model / o_session:.2f}" if o_session > 0 and all(x.get("rss_before_load_bytes") for x in gec)
                     else "n/a")
        ratio = g_med / o_med
        ratios.append(ratio)
        if a.peak:
            flops = dense_flops(a.gec, gom, md, a.threads)
            got = [p for p in peaks if p]
            peaks_all += got
            if flops and got:
                pk = statistics.median(got)
                g_rate, o_rate = flops / g_med / 1e6, flops / o_med / 1e6
                peak_rows.append(f"| {name} | {flops / 1e9:.2f} | {g_rate:.0f} | {o_rate:.0f} | {pk:.0f} "
                                 f"({min(got):.0f}-{max(got):.0f}) | **{100 * g_rate / pk:.0f}%** "
                                 f"| {100 * o_rate / pk:.0f}% |")
            else:
                peak_rows.append(f"| {name} | {'no FLOP count' if not flops else 'no peak measured'} |" + " |" * 5)
        ort_err = max((c.get("maxAbs") or 0) for c in ort[0].get("check", [])) if a.tf else None
        extra = ""
        if a.baseline:
            b_med = med(base, "median_ms")
            spread = (max(x["median_ms"] for x in gec) - min(x["median_ms"] for x in gec)) / g_med
            base_ratios.append(g_med / b_med)
            compile_ratios.append(compile_ms / base_compile_ms)
            extra = (f" {fmt(b_med, 3)} | **{g_med / b_med:.2f}** | {100 * spread:.0f}% "
                     f"| {base_compile_ms:.0f} |")
        rows.append(f"| {name} | {fmt(o_med, 3)} | {fmt(g_med, 3)} | **{ratio:.2f}** | {fmt(o_p90, 3)} | {fmt(g_p90, 3)} "
                    f"| {o_rss:.1f} ({o_base:.0f} before) | {g_rss:.1f} | {g_rss / o_rss:.2f} "
                    f"| {(f'{g_rss / o_session:.2f}' if o_session > 0 else 'n/a')} | {both_less} "
                    f"| {med(ort, 'session_create_ms'):.0f} | {compile_ms:.0f} | {med(gec, 'load_ms'):.1f} "
                    f"| {cold(ort, 'session_create_ms'):.0f} / {cold(gec, 'load_ms'):.0f} "
                    f"| {cold(ort, 'session_create_ms') / cold(gec, 'load_ms'):.1f}x "
                    f"| {('%.2g' % err) if err is not None else 'FAIL ' + why[:60]} |" +
                    (f" {ort_err:.2g} |" if a.tf else "") + extra)
    progress("")
    tf_note = " on TensorFlow models (ORT runs gec's ONNX export of the imported graph)" if a.tf else ""
    shapes_note = ("the graphs' own input shapes" if a.tf else "dynamic input dims kept" if a.dynamic
                   else "input shapes fixed to the test data (--input-shape)")
    head = (f"gec {a.opt} vs ONNX Runtime 1.30 (onnxruntime-node){tf_note}, {a.threads} threads, "
            f"{'with a CPU-bound competitor pinned to CPU 0, ' if a.busy else ''}{a.rounds} rounds A/B of "
            f"{a.runs} timed runs after {a.warmup} warm-up"
            f"{f', each timed run after a {a.interval_ms:g} ms wait' if a.interval_ms else ''}; medians of the rounds; "
            f"{shapes_note}\n\n"
            "| model | ORT median ms | gec median ms | gec/ORT | ORT p90 ms | gec p90 ms | ORT peak RSS MB | "
            "gec peak RSS MB | RSS gec/ORT | RSS gec/(ORT - before) | RSS (gec - before) / (ORT - before) | ORT session create ms | gec compile ms | gec .gom load ms | "
            "create + first run ms ORT / gec | ORT/gec | " +
            ("gec max abs err vs TensorFlow.js | ORT max abs err vs TensorFlow.js |" if a.tf else "max abs err vs ORT |") +
            (" baseline median ms | gec/baseline | spread of gec rounds | baseline compile ms |" if a.baseline else "") +
            "\n|" + "---|" * ((21 if a.baseline else 17) + (1 if a.tf else 0)))
    gm = lambda xs: math.exp(sum(math.log(r) for r in xs) / len(xs)) if xs else float("nan")
    geo = gm(ratios)
    table = head + "\n" + "\n".join(rows) + f"\n\nGeometric mean of the latency ratios gec/ORT: **{geo:.2f}** " \
        f"over {len(ratios)} models (below 1 means gec is faster).\n"
    if a.baseline:
        table += (f"Geometric mean gec/baseline ({a.baseline}): latency **{gm(base_ratios):.2f}**, "
                  f"compile time {gm(compile_ratios):.2f}.\n")
    if a.peak:
        table += ("\nDense-op rate against the fp32 peak measured after every round (build/peak_fp32, "
                  f"{a.threads} threads, 0.5 s per thread count): FLOPs per run as `gec profile` counts them (convolutions, "
                  "ConvTranspose, MatMuls, Gemms, attention; a Winograd convolution counts its direct FLOPs), over each engine's median "
                  "latency\n\n"
                  "| model | dense GFLOP per run | gec GFLOP/s | ORT GFLOP/s | peak GFLOP/s, median (range) | "
                  "gec % of peak | ORT % of peak |\n|---|---|---|---|---|---|---|\n" + "\n".join(peak_rows) + "\n")
        if not peaks_all:
            table += "\n(no peak measured: build peak_fp32 next to the gec binary: ninja -C build peak_fp32)\n"
    print(table)
    if a.out:
        with open(a.out, "w") as f:
            f.write(table)
    shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
