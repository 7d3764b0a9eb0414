// The schedule stage's cost estimate of one node, for stream assignment
// (streams.cc): time in microseconds from the FLOPs and bytes its static
// shapes imply. Constants calibrated once on the development machine (AMD
// EPYC, AVX-512, 2 cores) with `gec profile --json` of resnet50, googlenet,
// mobilenet_v2, squeezenet1_1 and bert_like_encoder at --threads 1 and 2,
// FLOPs and bytes summed over their nodes: convolutions and MatMuls ran at
// 86-111 GFLOP/s on one thread and 184-210 on two (mobilenet_v2's depthwise
// convs do not scale: 87 on both), the other ops moved 32-57 GB/s on one
// thread (cache-resident activations); a kernel call costs about 1 us even
// when tiny, and opening and joining an OpenMP parallel region 2-5 us.
// Rough by design: it ranks branches and decides whether streams pay, it does
// not predict latency.
#pragma once

#include "ir/graph.h"

namespace gec::schedule {

inline constexpr double kFlopsPerThreadPerUs = 100e3;  // 100 GFLOP/s
inline constexpr double kBytesPerThreadPerUs = 40e3;   // 40 GB/s
inline constexpr double kNodeOverheadUs = 1.0;
inline constexpr double kParallelRegionUs = 3.0;
inline constexpr double kParallelEfficiency = 0.95;
/// What one cross-stream event costs the waiting step (record, wake-up,
/// cache lines moving between cores).
inline constexpr double kEventUs = 3.0;

/// Estimated microseconds of `n` on `threads` intra-op threads (>= 1). Shapes
/// not known at compile time count as 64 KiB of traffic; a node owning
/// subgraphs costs its bodies once.
double node_cost_us(const ir::Node& n, int threads);

}  // namespace gec::schedule
