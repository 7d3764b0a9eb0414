// Numpy multidirectional broadcasting (ONNX "Broadcasting in ONNX") as a loop
// plan that kernels share, plus the OpenMP range splitter used by the
// elementwise and reduction kernels.
//
// A plan turns N input shapes and the output shape into "rows": the output is
// walked row-major; each row is the merged innermost run of dims in which
// every input is either contiguous (step 1) or repeats one element (step 0).
// Adjacent output dims merge when every input broadcasts both or neither, so
// the common cases collapse to very few rows:
//   same shapes            [2,3,4] + [2,3,4] -> 1 row of 24, both contiguous
//   scalar operand         [2,3,4] + []      -> 1 row of 24, b repeats
//   per-channel bias       [N,C,HW] + [C,1]  -> N*C rows of HW, b repeats
//   row vector             [N,C] + [C]       -> N rows of C, both contiguous
// A kernel then runs a straight (vectorizable) loop per row and picks its
// contiguous / repeated variant from `inner_bcast`, never doing per-element
// index arithmetic.
#pragma once

#include <omp.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <vector>

#include "gec/tensor.h"

namespace gec::kernels::cpu {

/// Below this many elements a kernel stays on one thread (thread start-up
/// costs more than the work).
constexpr int64_t kParallelMinElements = 32 * 1024;

/// Threads to use for `work` elements: 1 when small, else `num_threads`.
inline int threads_for(int64_t work, int num_threads) {
  return (work >= kParallelMinElements && num_threads > 1) ? num_threads : 1;
}

/// Calls f(begin, end) over disjoint subranges covering [0, n), in parallel
/// when the work (elements touched; n when not given) is at least
/// kParallelMinElements. Each call gets one contiguous range.
template <typename F>
void parallel_ranges(int64_t n, int num_threads, F&& f, int64_t work = -1) {
  const int nt = n > 1 ? threads_for(work < 0 ? n : work, num_threads) : 1;
  if (nt == 1) {
    if (n > 0) f(int64_t{0}, n);
    return;
  }
#pragma omp parallel num_threads(nt)
  {
    const int64_t t = omp_get_thread_num(), k = omp_get_num_threads();
    const int64_t b = n * t / k, e = n * (t + 1) / k;
    if (b < e) f(b, e);
  }
}

/// f(i) for every i < n: on `nt` threads when nt > 1 (a static schedule,
/// each thread a contiguous share), else a plain loop on the calling thread.
/// The caller picks nt (1 below its own size threshold). One thread never
/// enters OpenMP: with libgomp 12 even an `if (false)` or one-thread region
/// costs ~1.2 us and a futex call (measured here), which every small node
/// paid on every run (silero_vad_v5: 216 nodes in 0.12 ms).
template <typename F>
void parallel_for(int64_t n, int nt, F&& f) {
  if (nt <= 1 || n <= 1) {
    for (int64_t i = 0; i < n; ++i) f(i);
    return;
  }
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t i = 0; i < n; ++i) f(i);
}

/// Loop plan for broadcasting N inputs to one output; see the file comment.
template <size_t N>
struct BroadcastPlan {
  int64_t numel = 0;                 // output elements
  int64_t inner = 1;                 // elements per row
  std::array<bool, N> inner_bcast{}; // input i repeats one element along a row
  int64_t rows = 0;                  // numel / inner (0 for an empty output)
  std::vector<int64_t> outer_dims;   // merged outer dims, outermost first
  /// outer_strides[d][i]: elements input i advances per step of outer dim d
  /// (0 where input i is broadcast along d).
  std::vector<std::array<int64_t, N>> outer_strides;
};

/// Builds the plan. Each input shape must broadcast to `out` (the infer
/// function has checked this); shapes shorter than `out` are right-aligned.
template <size_t N>
BroadcastPlan<N> make_broadcast_plan(const Shape& out, const std::array<const Shape*, N>& in) {
  BroadcastPlan<N> p;
  p.numel = shape_numel(out);
  if (p.numel == 0) return p;
  const size_t r = out.size();
  // Merged dims, innermost first: size + per-input "broadcast along it" flag.
  std::vector<int64_t> dims;
  std::vector<std::array<bool, N>> flags;
  for (size_t k = r; k-- > 0;) {
    if (out[k] == 1) continue;  // size-1 output dims never move any pointer
    std::array<bool, N> f{};
    for (size_t i = 0; i < N; ++i) {
      const size_t ri = in[i]->size();
      const size_t lead = r - ri;
      f[i] = k < lead || (*in[i])[k - lead] == 1;
    }
    if (!dims.empty() && flags.back() == f) {
      dims.back() *= out[k];
    } else {
      dims.push_back(out[k]);
      flags.push_back(f);
    }
  }
  if (dims.empty()) {  // every output dim is 1: one element
    p.rows = 1;
    return p;
  }
  p.inner = dims[0];
  p.inner_bcast = flags[0];
  p.rows = p.numel / p.inner;
  std::array<int64_t, N> run{};  // elements of each input covered so far
  for (size_t i = 0; i < N; ++i) run[i] = flags[0][i] ? 1 : dims[0];
  std::vector<int64_t> od;
  std::vector<std::array<int64_t, N>> os;
  for (size_t d = 1; d < dims.size(); ++d) {
    std::array<int64_t, N> s{};
    for (size_t i = 0; i < N; ++i) {
      s[i] = flags[d][i] ? 0 : run[i];
      if (!flags[d][i]) run[i] *= dims[d];
    }
    od.push_back(dims[d]);
    os.push_back(s);
  }
  p.outer_dims.assign(od.rbegin(), od.rend());
  p.outer_strides.assign(os.rbegin(), os.rend());
  return p;
}

namespace detail {
/// Input offsets of the first element of row `row`.
template <size_t N>
std::array<int64_t, N> row_offsets(const BroadcastPlan<N>& p, int64_t row) {
  std::array<int64_t, N> off{};
  for (size_t d = p.outer_dims.size(); d-- > 0;) {
    const int64_t q = row % p.outer_dims[d];
    row /= p.outer_dims[d];
    for (size_t i = 0; i < N; ++i) off[i] += q * p.outer_strides[d][i];
  }
  return off;
}

/// Walks rows [r0, r1) with an odometer (no division per row).
template <size_t N, typename F>
void walk_rows(const BroadcastPlan<N>& p, int64_t r0, int64_t r1, F& f) {
  std::array<int64_t, N> off = row_offsets(p, r0);
  const size_t nd = p.outer_dims.size();
  std::vector<int64_t> idx(nd, 0);
  int64_t rem = r0;
  for (size_t d = nd; d-- > 0;) {
    idx[d] = rem % p.outer_dims[d];
    rem /= p.outer_dims[d];
  }
  for (int64_t r = r0; r < r1; ++r) {
    f(r * p.inner, off, p.inner);
    for (size_t d = nd; d-- > 0;) {  // advance the odometer
      for (size_t i = 0; i < N; ++i) off[i] += p.outer_strides[d][i];
      if (++idx[d] < p.outer_dims[d]) break;
      for (size_t i = 0; i < N; ++i) off[i] -= p.outer_strides[d][i] * p.outer_dims[d];
      idx[d] = 0;
    }
  }
}
}  // namespace detail

/// Calls f(out_offset, in_offsets, n) for pieces of rows covering the whole
/// output exactly once: out elements [out_offset, out_offset + n) take input i
/// from in_offsets[i] onwards (step 1) or from in_offsets[i] only when
/// p.inner_bcast[i]. Runs on up to `num_threads` OpenMP threads when the
/// output is large; long single rows are split so all threads get work.
template <size_t N, typename F>
void for_each_row(const BroadcastPlan<N>& p, int num_threads, F&& f) {
  if (p.numel == 0) return;
  const int nt = threads_for(p.numel, num_threads);
  if (nt == 1) {
    detail::walk_rows(p, 0, p.rows, f);
    return;
  }
  if (p.rows >= 4 * nt) {
#pragma omp parallel num_threads(nt)
    {
      const int64_t t = omp_get_thread_num(), k = omp_get_num_threads();
      const int64_t b = p.rows * t / k, e = p.rows * (t + 1) / k;
      if (b < e) detail::walk_rows(p, b, e, f);
    }
    return;
  }
  // Few long rows: cut each row into `pieces` parts.
  const int64_t pieces = (4 * nt + p.rows - 1) / p.rows;
  const int64_t items = p.rows * pieces;
#pragma omp parallel for num_threads(nt) schedule(static)
  for (int64_t it = 0; it < items; ++it) {
    const int64_t row = it / pieces, piece = it % pieces;
    const int64_t b = p.inner * piece / pieces, e = p.inner * (piece + 1) / pieces;
    if (b == e) continue;
    std::array<int64_t, N> off = detail::row_offsets(p, row);
    for (size_t i = 0; i < N; ++i)
      if (!p.inner_bcast[i]) off[i] += b;
    f(row * p.inner + b, off, e - b);
  }
}

}  // namespace gec::kernels::cpu
