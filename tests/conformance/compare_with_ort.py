#!/usr/bin/python3
"""Compares gec's ONNX node-test results with ONNX Runtime's, test by test.

Runs `gec test` over /usr/share/libonnx-testdata/data/node at -O0 and -O3
(strict comparison, as CI does, without the expectations file) and reads
ONNX Runtime's per-test status from ../shared/bench/ort_node_conformance.json.
Prints the counts, the tests gec passes that ONNX Runtime does not, and the
reverse (which should be empty).

Usage: tests/conformance/compare_with_ort.py [--gec build/gec] [--ort FILE]
"""
import argparse
import json
import os
import re
import subprocess

HERE = os.path.dirname(os.path.abspath(__file__))
NODE = "/usr/share/libonnx-testdata/data/node"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--gec", default=os.path.join(HERE, "..", "..", "build", "gec"))
    ap.add_argument("--ort", default=os.path.join(HERE, "..", "..", "..", "shared", "bench",
                                                   "ort_node_conformance.json"))
    a = ap.parse_args()
    out = subprocess.run([a.gec, "test", NODE, "-O", "0", "-O", "3", "--rtol", "1e-3", "--atol", "1e-7",
                          "--threads", "1"], capture_output=True, text=True).stdout
    gec = {}
    for line in out.splitlines():
        m = re.match(r"^(PASS|FAIL) +(\S+)", line)
        if m:
            gec[m.group(2)] = m.group(1) == "PASS"
    ort = {t["name"]: t["status"] for t in json.load(open(a.ort))["tests"]}
    ort_pass = {n for n, s in ort.items() if s == "pass"}
    gec_pass = {n for n, ok in gec.items() if ok}
    print(f"node tests: {len(gec)}; gec passes {len(gec_pass)} (strict, -O0 and -O3); "
          f"ONNX Runtime passes {len(ort_pass)}")
    only_gec = sorted(gec_pass - ort_pass)
    only_ort = sorted(ort_pass - gec_pass)
    print(f"\ngec passes, ONNX Runtime does not ({len(only_gec)}):")
    for n in only_gec:
        print(f"  {n}  (ORT: {ort.get(n, 'absent')})")
    print(f"\nONNX Runtime passes, gec does not ({len(only_ort)}):")
    for n in only_ort:
        print(f"  {n}")
    return 1 if only_ort else 0


if __name__ == "__main__":
    raise SystemExit(main())
