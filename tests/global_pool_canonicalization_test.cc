// The rule spatial_mean (pass global_pool_canonicalization): a ReduceMean
// over exactly the spatial dims 2 .. r-1 becomes GlobalAveragePool, followed
// by Flatten(axis 1) when keepdims is 0, for images and volumes; the axes a
// constant input (the IR's ReduceMean-18 form), negative or in any order. Outputs
// are checked against the original graph (expect_rewrite); other axes, a
// reduction over everything, axes known only at run, rank 3, an empty map
// and integer data stay.
#include <gtest/gtest.h>

#include "passes_util.h"

namespace gec::passes {
namespace {
using namespace gec::passes::testing;

TEST(GlobalPoolCanonicalization, SpatialMeanWithKeepdimsIsAGlobalAveragePool) {
  auto pass = make_global_pool_canonicalization();
  expect_rewrite(*pass, R"(graph {
  input %x: float32[2,4,3,5]
  const %a: int64[2] = [3, 2]
  %y = ReduceMean(%x, %a) : float32[2,4,1,1]
  output %y
})", R"(graph {
  input %x: float32[2,4,3,5]
  %y = GlobalAveragePool(%x) : float32[2,4,1,1]
  output %y
})", 1);
}

TEST(GlobalPoolCanonicalization, WithoutKeepdimsAFlattenFollows) {
  auto pass = make_global_pool_canonicalization();
  expect_rewrite(*pass, R"(graph {
  input %x: float32[1,6,4,4]
  const %a: int64[2] = [-2, -1]
  %m = ReduceMean(%x, %a) {keepdims = 0} : float32[1,6]
  %y = Relu(%m) : float32[1,6]
  output %y
})", R"(graph {
  input %x: float32[1,6,4,4]
  %p = GlobalAveragePool(%x) : float32[1,6,1,1]
  %m = Flatten(%p) {axis = 1} : float32[1,6]
  %y = Relu(%m) : float32[1,6]
  output %y
})", 1);
}

TEST(GlobalPoolCanonicalization, TwoSpatialDimsOfAVolume) {
  auto pass = make_global_pool_canonicalization();
  expect_rewrite(*pass, R"(graph {
  input %x: float32[1,3,2,4,5]
  const %a: int64[3] = [4, 2, 3]
  %y = ReduceMean(%x, %a) : float32[1,3,1,1,1]
  output %y
})", R"(graph {
  input %x: float32[1,3,2,4,5]
  %y = GlobalAveragePool(%x) : float32[1,3,1,1,1]
  output %y
})", 1);
}

TEST(GlobalPoolCanonicalization, OtherReductionsStay) {
  auto pass = make_global_pool_canonicalization();
  // The channels too.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,4,3,3]
  const %a: int64[3] = [1, 2, 3]
  %y = ReduceMean(%x, %a) : float32[1,1,1,1]
  output %y
})");
  // Only one of two spatial dims.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,4,3,3]
  const %a: int64[1] = [3]
  %y = ReduceMean(%x, %a) : float32[1,4,3,1]
  output %y
})");
  // No axes: every dim.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,4,3,3]
  %y = ReduceMean(%x) : float32[1,1,1,1]
  output %y
})");
  // Axes known only at run.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,4,3,3]
  input %a: int64[2]
  %y = ReduceMean(%x, %a) : float32[1,4,1,1]
  output %y
})");
  // Rank 3: [B, T, C] over its last axis is as often a transformer's norm.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[2,3,7]
  const %a: int64[1] = [2]
  %y = ReduceMean(%x, %a) : float32[2,3,1]
  output %y
})");
  // An empty spatial dim: ReduceMean's NaN, not GlobalAveragePool's error.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,4,0,3]
  const %a: int64[2] = [2, 3]
  %y = ReduceMean(%x, %a) : float32[1,4,1,1]
  output %y
})");
  // Rank 2: no spatial dims.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[4,3]
  const %a: int64[1] = [1]
  %y = ReduceMean(%x, %a) : float32[4,1]
  output %y
})");
  // Integer data (GlobalAveragePool is float only).
  expect_unchanged(*pass, R"(graph {
  input %x: int32[1,4,3,3]
  const %a: int64[2] = [2, 3]
  %y = ReduceMean(%x, %a) : int32[1,4,1,1]
  output %y
})");
  // An axis twice: not every spatial dim.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,4,3,3]
  const %a: int64[2] = [2, -2]
  %y = ReduceMean(%x, %a) : float32[1,4,1,3]
  output %y
})");
  // An axis out of range is the op's error to raise, not a pattern.
  expect_unchanged(*pass, R"(graph {
  input %x: float32[1,4,3,3]
  const %a: int64[2] = [2, 7]
  %y = ReduceMean(%x, %a) : float32[1,4,1,1]
  output %y
})");
}

}  // namespace
}  // namespace gec::passes
