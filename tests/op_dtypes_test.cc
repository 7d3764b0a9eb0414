// The dtype table `gec ops` prints (kernels::input0_dtypes) against the
// kernels: every kernel has an entry, and no ONNX conformance model that
// passes feeds an op an input-0 dtype the table leaves out.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include "kernels/kernel.h"
#include "ops/op_schema.h"

namespace fs = std::filesystem;

namespace gec {
namespace {

TEST(OpDtypes, EveryKernelHasAnEntry) {
  size_t n = 0;
  for (const auto& [domain, op] : ops::registered_ops()) {
    if (!kernels::find_kernel(domain, op)) continue;
    const std::vector<DType>* d = kernels::input0_dtypes(domain, op);
    ASSERT_NE(d, nullptr) << domain << "::" << op << " has a kernel but no entry in kernels/cpu/dtype_support.cc";
    EXPECT_FALSE(d->empty()) << op;
    ++n;
  }
  EXPECT_GT(n, 150u);
  EXPECT_EQ(kernels::input0_dtypes("", "NoSuchOp"), nullptr);
}

// The tests tests/conformance/expectations.txt lists as failing.
std::set<std::string> expected_failures() {
  std::set<std::string> r;
  std::ifstream f(std::string(GEC_SOURCE_DIR) + "/tests/conformance/expectations.txt");
  std::string line;
  while (std::getline(f, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream ss(line);
    std::string name, kind;
    ss >> name >> kind;
    if (kind == "fail" || kind == "skip") r.insert(name);
  }
  return r;
}

// Every node of a passing single-graph node test whose input 0 is a graph
// input of declared type: that dtype must be in the op's entry (an entry
// that is too narrow would make `gec ops` deny what runs).
TEST(OpDtypes, ConformanceModelsThatPassUseListedDtypes) {
  const fs::path root = "/usr/share/libonnx-testdata/data/node";
  ASSERT_TRUE(fs::is_directory(root)) << root << " (Debian's libonnx-testdata) is missing";
  const std::set<std::string> failing = expected_failures();
  size_t checked = 0;
  for (const auto& entry : fs::directory_iterator(root)) {
    const std::string test = entry.path().filename().string();
    if (failing.count(test)) continue;
    onnx::ModelProto m;
    std::ifstream f(entry.path() / "model.onnx", std::ios::binary);
    if (!f || !m.ParseFromIstream(&f)) continue;
    std::map<std::string, int> input_dtype;
    for (const auto& in : m.graph().input())
      if (in.type().has_tensor_type()) input_dtype[in.name()] = in.type().tensor_type().elem_type();
    for (const auto& node : m.graph().node()) {
      if (node.input_size() == 0 || !input_dtype.count(node.input(0))) continue;
      const std::string domain = node.domain() == "ai.onnx" ? "" : node.domain();
      const std::vector<DType>* d = kernels::input0_dtypes(domain, node.op_type());
      if (!d) continue;  // rewritten on import (e.g. Upsample) or a function op
      const DType dt = static_cast<DType>(input_dtype[node.input(0)]);
      EXPECT_NE(std::find(d->begin(), d->end(), dt), d->end())
          << test << ": " << node.op_type() << " runs on " << dtype_name(dt) << ", which its entry lacks";
      ++checked;
    }
  }
  EXPECT_GT(checked, 500u);
}

}  // namespace
}  // namespace gec
