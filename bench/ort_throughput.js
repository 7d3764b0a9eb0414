'use strict';
// ONNX Runtime throughput with K requests in flight on one model:
//   node ort_throughput.js <modelDir> <K> <runsPerRequest> <threads>
// Two ways, both measured, each reported: one session with K runs in flight
// (onnxruntime-node runs each on a libuv worker; executionMode 'parallel'),
// and K sessions with one run each in flight (sequential mode). Each session
// gets max(1, threads / K) intra-op threads, as gec bench --concurrency does.
// Prints JSON: {one_session: {runs_per_s, median_ms, p90_ms}, k_sessions: {...}}.
// Run from a folder where onnxruntime-node is installed (bench/side_by_side.py's
// build/ort-bench; it needs tensorproto.js from ../shared/bench/ort beside it).
const fs = require('fs');
const path = require('path');
const ort = require('onnxruntime-node');
const TP = require('./tensorproto');

async function measure(sessions, feeds, k, runs) {
  const lat = [];
  for (let w = 0; w < 3; ++w) await Promise.all(sessions.map((s) => s.run(feeds)));  // warm-up
  const t0 = process.hrtime.bigint();
  const request = async (i) => {
    const s = sessions[i % sessions.length];
    for (let r = 0; r < runs; ++r) {
      const a = process.hrtime.bigint();
      await s.run(feeds);
      lat.push(Number(process.hrtime.bigint() - a) / 1e6);
    }
  };
  await Promise.all(Array.from({ length: k }, (_, i) => request(i)));
  const secs = Number(process.hrtime.bigint() - t0) / 1e9;
  lat.sort((x, y) => x - y);
  return { runs_per_s: lat.length / secs, median_ms: lat[Math.floor(lat.length / 2)],
           p90_ms: lat[Math.min(lat.length - 1, Math.floor(lat.length * 0.9))] };
}

(async () => {
  const [dir, kArg, runsArg, threadsArg] = process.argv.slice(2);
  const k = +kArg, runs = +runsArg, threads = +threadsArg;
  const per = Math.max(1, Math.floor(threads / k));
  const model = path.join(dir, 'model.onnx');
  const base = { intraOpNumThreads: per, interOpNumThreads: 1, graphOptimizationLevel: 'all' };
  const one = await ort.InferenceSession.create(model, { ...base, executionMode: k > 1 ? 'parallel' : 'sequential' });
  const feeds = {};
  one.inputNames.forEach((nm, i) => {
    feeds[nm] = TP.toOrtTensor(TP.tensorToOrtData(TP.decodeTensor(fs.readFileSync(path.join(dir, 'test_data_set_0', `input_${i}.pb`)))));
  });
  const result = { threads_per_session: per, one_session: await measure([one], feeds, k, runs) };
  if (k > 1) {
    const many = [];
    for (let i = 0; i < k; ++i) many.push(await ort.InferenceSession.create(model, { ...base, executionMode: 'sequential' }));
    result.k_sessions = await measure(many, feeds, k, runs);
  }
  process.stdout.write(JSON.stringify(result) + '\n');
})().catch((e) => { console.error(e.message); process.exit(1); });
