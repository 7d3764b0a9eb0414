// Returning pages of a mapped .gom (MappedFile::drop_resident) and the
// session using it: the load-time checksum leaves no weights resident, and
// once a convolution has packed its weight, the weight's pages of the
// mapping are no longer resident, while outputs do not change.
#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include "gec/compiler.h"
#include "gec/runtime.h"
#include "model/reader.h"
#include "onnx_build.h"
#include "support/mapped_file.h"

namespace gec {
namespace {

namespace ob = testing::onnx_build;

std::string temp_path(const std::string& name) {
  // As /proc/self/smaps spells it: no doubled or trailing slashes.
  return (std::filesystem::weakly_canonical(::testing::TempDir()) /
          ("gec_residency_" + std::to_string(::getpid()) + "_" + name))
      .string();
}

// Resident KiB of the mappings of `path` in this process (/proc/self/smaps);
// -1 when no mapping of it is found (so a check cannot pass by not looking).
long resident_kib_of(const std::string& path) {
  std::ifstream in("/proc/self/smaps");
  std::string line;
  bool inside = false, found = false;
  long kib = 0;
  while (std::getline(in, line)) {
    if (!line.empty() && std::isxdigit(static_cast<unsigned char>(line[0])) && line.find('-') < 17) {
      inside = line.size() >= path.size() && line.compare(line.size() - path.size(), path.size(), path) == 0;
      found = found || inside;
    } else if (inside && line.rfind("Rss:", 0) == 0) {
      std::istringstream ss(line.substr(4));
      long v = 0;
      ss >> v;
      kib += v;
    }
  }
  return found ? kib : -1;
}

TEST(MappedFile, DroppedPagesReadBackUnchanged) {
  const std::string path = temp_path("drop.bin");
  std::vector<uint8_t> bytes(size_t{3} << 20);
  std::mt19937 rng(7);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  { std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size()); }
  auto f = MappedFile::open(path);
  ASSERT_EQ(f->size(), bytes.size());
  EXPECT_TRUE(f->contains(f->data(), f->size()));
  EXPECT_TRUE(f->contains(f->data() + 10, f->size() - 10));
  EXPECT_FALSE(f->contains(f->data() + 10, f->size()));
  EXPECT_FALSE(f->contains(bytes.data(), 16));
  long sum = 0;
  for (size_t i = 0; i < f->size(); i += 512) sum += f->data()[i];  // fault it all in
  EXPECT_GT(resident_kib_of(path), 2 * 1024) << sum;
  f->drop_resident(f->data(), f->size());
  EXPECT_GE(resident_kib_of(path), 0);
  EXPECT_LT(resident_kib_of(path), 64);
  EXPECT_EQ(std::memcmp(f->data(), bytes.data(), bytes.size()), 0);
  f->drop_resident(bytes.data(), bytes.size());  // not in the mapping: ignored
  EXPECT_EQ(bytes[12345], f->data()[12345]);
  std::remove(path.c_str());
}

// MappedFile::read copies the file's bytes without touching the mapping
// (nothing of it becomes resident), refuses a range outside the mapping,
// and names the file when it has shrunk since it was mapped (reading the
// mapping there would raise SIGBUS).
TEST(MappedFile, ReadCopiesTheFileWithoutTheMapping) {
  const std::string path = temp_path("read.bin");
  std::vector<uint8_t> bytes(size_t{2} << 20);
  std::mt19937 rng(11);
  for (auto& b : bytes) b = static_cast<uint8_t>(rng());
  { std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), bytes.size()); }
  auto f = MappedFile::open(path);
  std::vector<uint8_t> got(bytes.size() - 100);
  ASSERT_TRUE(f->read(f->data() + 100, got.data(), got.size()));
  EXPECT_EQ(std::memcmp(got.data(), bytes.data() + 100, got.size()), 0);
  EXPECT_GE(resident_kib_of(path), 0);
  EXPECT_LT(resident_kib_of(path), 64);
  EXPECT_FALSE(f->read(f->data() + 100, got.data(), bytes.size()));  // past the end of the mapping
  EXPECT_FALSE(f->read(bytes.data(), got.data(), 16));               // not in the mapping
  ASSERT_EQ(::truncate(path.c_str(), 4096), 0);
  try {
    f->read(f->data() + 8192, got.data(), 16);
    ADD_FAILURE() << "read past the end of the shrunk file";
  } catch (const Error& e) {
    EXPECT_EQ(e.code(), ErrorCode::kIo);
    EXPECT_NE(std::string(e.what()).find("is shorter than when it was mapped"), std::string::npos) << e.what();
  }
  f.reset();
  std::remove(path.c_str());
}

// x[1,16,16,16] -> Conv W1[C,16,1,1] -> Conv W[C,C,3,3] + B, pads 1 ->
// Conv W3[16,C,1,1] -> y: between two convolutions the middle one runs in
// the blocked layout with W packed (9.4 MB at C = 512).
std::string conv_model(int64_t c) {
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,16,16,16");
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-0.05f, 0.05f);
  auto random = [&](size_t n) {
    std::vector<float> v(n);
    for (auto& e : v) e = u(rng);
    return v;
  };
  ob::add_float_init(g, "W1", {c, 16, 1, 1}, random(static_cast<size_t>(c * 16)));
  ob::add_float_init(g, "W", {c, c, 3, 3}, random(static_cast<size_t>(c * c * 9)));
  ob::add_float_init(g, "B", {c}, random(static_cast<size_t>(c)));
  ob::add_float_init(g, "W3", {16, c, 1, 1}, random(static_cast<size_t>(c * 16)));
  ob::add_node(g, "Conv", {"x", "W1"}, {"t"}, "conv1");
  ob::attr_ints(ob::add_node(g, "Conv", {"t", "W", "B"}, {"v"}, "conv2"), "pads", {1, 1, 1, 1});
  ob::add_node(g, "Conv", {"v", "W3"}, {"y"}, "conv3");
  ob::add_output(g, "y", ob::kFloat, "1,16,16,16");
  return m.SerializeAsString();
}

// Weights packed at run time (compiled with --disable-pass pack_weights):
// the plain pages are given back once packed. Weights packed at compile
// time: the run reads the stored copy in place and the plain pages are never
// read again, so about one copy of W stays resident, not two.
void check_packed_weight_residency(bool stored) {
  const int64_t c = 512;
  const std::string onnx = conv_model(c);
  CompileOptions opts;
  if (!stored) opts.disabled_passes = {"pack_weights"};
  CompiledModel cm = compile_onnx_bytes(onnx.data(), onnx.size(), opts);
  const std::string path = temp_path("conv.gom");
  save_gom(cm, path);
  const double weight_kib = double(c * c * 9 * 4) / 1024;
  double stored_kib = 0;  // the packed copies the .gom holds (Winograd's: 4x W)
  {
    // Only a convolution oneDNN runs blocked has W packed (and let go); on
    // a CPU without AVX-512 the layout pass keeps all three plain and W is
    // read at every run, rightly resident.
    const model::LoadedModel lm = model::read_gom_file(path);
    bool packed = false;
    for (const schedule::Step& st : lm.execution_plan.graphs[0].steps)
      packed = packed || (lm.graph->node_list()[static_cast<size_t>(st.node)]->name == "conv2" &&
                          !st.input_layouts.empty() && st.input_layouts[0] != ops::Layout::kPlain);
    if (!packed) GTEST_SKIP() << "this CPU runs conv2 plain: no weight is packed";
    EXPECT_EQ(lm.packed_weights.empty(), !stored);
    for (const auto& p : lm.packed_weights) stored_kib += double(p.bytes) / 1024;
  }

  Tensor x(DType::kFloat32, {1, 16, 16, 16});
  for (int64_t i = 0; i < x.numel(); ++i) x.as<float>()[i] = float((i * 37) % 101) / 50.0f - 1.0f;
  // From bytes nothing is dropped: the reference.
  auto from_bytes = Session::load_from_bytes(cm.gom);
  const std::vector<Tensor> want = from_bytes->run({x.view()});
  {
    auto s = Session::load(path);
    // The checksum read every page and gave each back.
    ASSERT_GE(resident_kib_of(path), 0) << path << " is not mapped";
    EXPECT_LT(resident_kib_of(path), 0.25 * weight_kib);
    for (int run = 0; run < 3; ++run) {
      const std::vector<Tensor> got = s->run({x.view()});
      ASSERT_EQ(got.size(), 1u);
      ASSERT_EQ(got[0].bytes(), want[0].bytes());
      EXPECT_EQ(std::memcmp(got[0].data(), want[0].data(), want[0].bytes()), 0) << "run " << run;
      // Packing read all of W; its pages are gone again, while the bias
      // (read at every run) pulls back at most its own neighbourhood. A
      // stored copy is read in place: it is resident, the plain W is not
      // (both would be the copy and W; the bias and the copies' edges may
      // pull back up to half of W in large page-cache folios).
      const long kib = resident_kib_of(path);
      ASSERT_GE(kib, 0) << path << " is not mapped";
      EXPECT_LT(kib, (stored ? stored_kib + 0.5 * weight_kib : 0.25 * weight_kib)) << "run " << run;
      if (stored) {
        EXPECT_GT(kib, 0.75 * stored_kib) << "run " << run << ": the stored copy is not what runs read";
      }
    }
    const Session::PackedWeightCounts pw = s->packed_weights();
    EXPECT_EQ(pw.adopted, stored ? pw.stored : 0);
    EXPECT_GE(pw.adopted + pw.packed, 1);
    if (stored) {
      EXPECT_EQ(pw.packed, 0);
    }
  }
  std::remove(path.c_str());
}

// VmRSS of this process in KiB (/proc/self/status).
long rss_kib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);)
    if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
  return -1;
}

// The arena's pages are present when Session::load returns, whether the
// loading thread made them so (one thread) or a helper beside the kernels
// (two threads, an arena from 2 MiB), and the runs read what they wrote.
// On a one-core machine the session's threads are capped at one and both
// loads take the loading thread's path.
// x[1, 4M] -> Relu -> t (16 MiB, in the arena) -> Add(t, t) -> y.
TEST(SessionMemory, TheArenaIsPresentWhenTheLoadReturns) {
  const int64_t n = int64_t{4} << 20;
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1," + std::to_string(n));
  ob::add_node(g, "Relu", {"x"}, {"t"}, "relu");
  ob::add_node(g, "Add", {"t", "t"}, {"y"}, "add");
  ob::add_output(g, "y", ob::kFloat, "1," + std::to_string(n));
  const std::string onnx = m.SerializeAsString();
  const CompiledModel cm = compile_onnx_bytes(onnx.data(), onnx.size(), CompileOptions{});
  const std::string path = temp_path("arena.gom");
  save_gom(cm, path);
  Tensor x(DType::kFloat32, {1, n});
  for (int64_t i = 0; i < n; ++i) x.as<float>()[i] = float(i % 7) - 3.0f;
  for (int threads : {1, 2}) {
    SessionOptions so;
    so.num_threads = threads;
    const long before = rss_kib();
    auto s = Session::load(path, so);
    const long after = rss_kib();
    ASSERT_GE(s->arena_bytes(), n * 4) << "t is planned in the arena";
    EXPECT_GE(after - before, 0.9 * double(n * 4) / 1024) << threads << " threads: the arena is not resident";
    for (int run = 0; run < 2; ++run) {
      const std::vector<Tensor> y = s->run({x.view()});
      ASSERT_EQ(y.size(), 1u);
      ASSERT_EQ(y[0].numel(), n);
      int64_t wrong = 0;
      for (int64_t i = 0; i < n; ++i) wrong += y[0].as<float>()[i] != 2.0f * std::max(0.0f, float(i % 7) - 3.0f);
      EXPECT_EQ(wrong, 0) << threads << " threads, run " << run;
    }
  }
  std::remove(path.c_str());
}

TEST(SessionMemory, PackedWeightsLeaveTheMappingAndOutputsMatch) { check_packed_weight_residency(false); }

TEST(SessionMemory, StoredPackedWeightsAreReadInPlaceAndOutputsMatch) { check_packed_weight_residency(true); }

}  // namespace
}  // namespace gec
