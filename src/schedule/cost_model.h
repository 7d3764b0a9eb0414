// The schedule stage's cost estimate of one node, for stream assignment
// (streams.cc): time in microseconds from the FLOPs and bytes its static
// shapes imply. Constants calibrated once on the development machine (AMD
// EPYC, AVX-512, 2 cores) from `gec profile` of the shared models: oneDNN
// convolutions and MatMuls reach 120-170 GFLOP/s per thread, memory-bound
// ops move 8-15 GB/s per thread out of L2/L3, a kernel call costs about 1 us
// even when tiny, and opening and joining an OpenMP parallel region 2-5 us.
// Rough by design: it ranks branches and decides whether streams pay, it does
// not predict latency.
#pragma once

#include "ir/graph.h"

namespace gec::schedule {

inline constexpr double kFlopsPerThreadPerUs = 150e3;  // 150 GFLOP/s
inline constexpr double kBytesPerThreadPerUs = 10e3;   // 10 GB/s
inline constexpr double kNodeOverheadUs = 1.0;
inline constexpr double kParallelRegionUs = 3.0;
inline constexpr double kParallelEfficiency = 0.9;
/// What one cross-stream event costs the waiting step (record, wake-up,
/// cache lines moving between cores).
inline constexpr double kEventUs = 3.0;

/// Estimated microseconds of `n` on `threads` intra-op threads (>= 1). Shapes
/// not known at compile time count as 64 KiB of traffic; a node owning
/// subgraphs costs its bodies once.
double node_cost_us(const ir::Node& n, int threads);

}  // namespace gec::schedule
