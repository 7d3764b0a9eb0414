// The gec command line, end to end: every subcommand's options, exit statuses
// for bad input (2, with a message naming what is wrong), and the JSON shapes
// of --report and bench --json. Runs the built `gec` binary on small models
// made here with the ONNX protobuf API.
#include <gtest/gtest.h>
#include <onnx/onnx_pb.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>
#include <vector>

#include "frontend/onnx/tensor_proto.h"
#include "gec/compiler.h"
#include "gec/runtime.h"
#include "model/reader.h"
#include "model/writer.h"
#include "onnx_build.h"
#include "support/npy.h"
#include "test_util.h"

namespace fs = std::filesystem;

namespace gec {
namespace {

struct Result {
  int status = -1;
  std::string out;  // stdout + stderr
};

/// Runs `gec args`; `env` (e.g. "env -u X ") goes before the binary.
Result gec(const std::string& args, const std::string& env = "") {
  Result r;
  std::string cmd = env + std::string(GEC_BINARY) + " " + args + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  std::array<char, 4096> buf;
  size_t n;
  while ((n = fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  int st = pclose(p);
  r.status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
  return r;
}

// y = Relu(x + b), x: float32[1,4], b constant; or an op we do not support.
void write_model(const fs::path& path, const std::string& op = "Relu", const std::string& domain = "") {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(13);
  if (!domain.empty()) {
    auto* o = m.add_opset_import();
    o->set_domain(domain);
    o->set_version(1);
  }
  auto* g = m.mutable_graph();
  g->set_name("tiny");
  auto add_io = [](onnx::ValueInfoProto* v, const char* name) {
    v->set_name(name);
    auto* tt = v->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(onnx::TensorProto::FLOAT);
    tt->mutable_shape()->add_dim()->set_dim_value(1);
    tt->mutable_shape()->add_dim()->set_dim_value(4);
  };
  add_io(g->add_input(), "x");
  add_io(g->add_output(), "y");
  auto* b = g->add_initializer();
  b->set_name("b");
  b->set_data_type(onnx::TensorProto::FLOAT);
  b->add_dims(4);
  for (float v : {1.f, -1.f, 2.f, -2.f}) b->add_float_data(v);
  auto* add = g->add_node();
  add->set_name("add0");
  add->set_op_type("Add");
  add->add_input("x");
  add->add_input("b");
  add->add_output("s");
  auto* act = g->add_node();
  act->set_name("act0");
  act->set_op_type(op);
  act->set_domain(domain);
  act->add_input("s");
  act->add_output("y");
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
}

class Cli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("gec_cli_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::create_directories(dir_ / "case" / "test_data_set_0");
    write_model(dir_ / "case" / "model.onnx");
    frontend::write_tensor_proto_file((dir_ / "case/test_data_set_0/input_0.pb").string(),
                                      testing::make<float>({1, 4}, {0.5f, 0.5f, -3.f, 3.f}).view(), "x");
    frontend::write_tensor_proto_file((dir_ / "case/test_data_set_0/output_0.pb").string(),
                                      testing::make<float>({1, 4}, {1.5f, 0.f, 0.f, 1.f}).view(), "y");
  }
  void TearDown() override { fs::remove_all(dir_); }
  std::string p(const std::string& rel) const { return (dir_ / rel).string(); }
  fs::path dir_;
};

TEST_F(Cli, CompileAtEveryLevelWithReport) {
  for (const char* level : {"-O0", "-O1", "-O2", "-O3"}) {
    Result r = gec("compile " + p("case/model.onnx") + " -o " + p("m.gom") + " " + level + " --report " + p("r.json"));
    ASSERT_EQ(r.status, 0) << level << ": " << r.out;
    ASSERT_TRUE(fs::exists(p("m.gom")));
    auto j = nlohmann::json::parse(std::ifstream(p("r.json")));
    for (const char* s : {"parse", "optimize", "schedule", "memory", "lower", "serialize"})
      EXPECT_TRUE(j["stages"][s].is_number()) << s;
    // Weights are packed from -O2 up.
    const bool packs = std::string(level) >= "-O2";
    EXPECT_EQ(j["stages"].contains("pack_weights"), packs) << level;
    EXPECT_EQ(j.contains("packed_weights"), packs) << level;
    ASSERT_TRUE(j["passes"].is_array());
    for (const auto& pass : j["passes"])
      for (const char* k : {"name", "ms", "nodes_before", "nodes_after", "changes"}) EXPECT_TRUE(pass.contains(k)) << k;
    EXPECT_EQ(j["nodes"]["onnx"], 2);
    for (const char* k : {"no_reuse_bytes", "arena_bytes", "lower_bound_bytes", "weights_bytes", "reuse_rate"})
      EXPECT_TRUE(j["memory"][k].is_number()) << k;
  }
  Result v = gec("compile " + p("case/model.onnx") + " -o " + p("m.gom") + " --verbose");
  EXPECT_EQ(v.status, 0);
  EXPECT_NE(v.out.find("shape_inference"), std::string::npos) << v.out;
}

TEST_F(Cli, BadOptionsExitWithTwo) {
  EXPECT_EQ(gec("compile " + p("case/model.onnx") + " -O7").status, 2);
  EXPECT_EQ(gec("compile").status, 2);
  Result r = gec("frobnicate");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("gec: error: unknown command 'frobnicate' (commands: "), std::string::npos) << r.out;
  // A misspelt command: the closest one is suggested.
  r = gec("benhc " + p("case/model.onnx"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("unknown command 'benhc' (did you mean 'bench'? commands: "), std::string::npos) << r.out;
  // The parser's own errors say they are errors, as every other usage error does.
  r = gec("compile " + p("case/model.onnx") + " --bogus");
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(r.out.rfind("gec: error: ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("--bogus"), std::string::npos) << r.out;
  r = gec("bench " + p("case/model.onnx") + " --iterations 0");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("not in range 1 to"), std::string::npos) << r.out;
  r = gec("test --threads -1 " + p("case"));
  EXPECT_EQ(r.status, 2) << "a usage error, not a failing test: " << r.out;
  // --threads' range is SessionOptions::num_threads': 4 x the machine's cores.
  const std::string threads_range =
      "not in range 0 to " + std::to_string(kMaxThreadsPerCore * static_cast<int>(std::max(1u, std::thread::hardware_concurrency())));
  EXPECT_NE(r.out.find(threads_range), std::string::npos) << r.out;
  // Bounds as written, and a value that is no number said to be none.
  r = gec("bench " + p("case/model.onnx") + " --interval-ms 70000");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--interval-ms: Value 70000 not in range 0 to 60000 "), std::string::npos) << r.out;
  r = gec("bench " + p("case/model.onnx") + " --interval-ms soon");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("'soon' is not a number"), std::string::npos) << r.out;
  r = gec("bench " + p("case/model.onnx") + " --threads 1.5");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("'1.5' is not a whole number"), std::string::npos) << r.out;
  r = gec("bench " + p("case/model.onnx") + " --threads 3000000000");  // beyond int: out of range, still a number
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("Value 3000000000 " + threads_range), std::string::npos) << r.out;
  r = gec("test " + p("case") + " --rtol soon");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--rtol: 'soon' is not a number"), std::string::npos) << r.out;
  EXPECT_EQ(gec("bench " + p("case/model.onnx") + " --interval-ms nan").status, 2);
  EXPECT_EQ(gec("--version").status, 0);
  r = gec("compile " + p("case/model.onnx") + " -o " + p("m.gom") + " --disable-pass no_such_pass");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("no_such_pass"), std::string::npos);
  // One name per --disable-pass: the model path after them stays the model.
  r = gec("compile --disable-pass cse --disable-pass winograd " + p("case/model.onnx") + " -o " + p("m.gom"));
  EXPECT_EQ(r.status, 0) << r.out;
  r = gec("compile " + p("case/model.onnx") + " -o " + p("m.gom") + " --input-shape x:1,four");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("four"), std::string::npos);
}

TEST_F(Cli, UnsupportedOpNamesNodeOpDomainOpsetAndWritesNothing) {
  write_model(dir_ / "bad.onnx", "Frobnicate", "com.example");
  Result r = gec("compile " + p("bad.onnx") + " -o " + p("bad.gom"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1) << "one line: " << r.out;
  for (const char* s : {"act0", "Frobnicate", "com.example", "opset 1"}) EXPECT_NE(r.out.find(s), std::string::npos) << s << ": " << r.out;
  EXPECT_NE(r.out.find("float32[1,4]"), std::string::npos) << r.out;
  EXPECT_FALSE(fs::exists(p("bad.gom")));
}

TEST_F(Cli, MalformedModelsExitWithTwo) {
  std::ofstream(p("garbage.onnx")) << "this is not a protobuf at all";
  Result r = gec("compile " + p("garbage.onnx") + " -o " + p("g.gom"));
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_FALSE(fs::exists(p("g.gom")));
  std::string bytes;
  {
    std::ifstream f(p("case/model.onnx"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  std::ofstream(p("trunc.onnx"), std::ios::binary) << bytes.substr(0, bytes.size() / 2);
  EXPECT_EQ(gec("compile " + p("trunc.onnx") + " -o " + p("t.gom")).status, 2);
  EXPECT_EQ(gec("compile " + p("missing.onnx")).status, 2);
  // A missing model says why it cannot be opened, in every command.
  for (const char* cmd : {"bench", "profile", "run"}) {
    const auto r = gec(std::string(cmd) + " " + p("missing.gom"));
    EXPECT_EQ(r.status, 2) << cmd;
    EXPECT_NE(r.out.find("No such file or directory"), std::string::npos) << cmd << ": " << r.out;
  }
}

TEST_F(Cli, RunWritesOutputsAndRefusesBadInputs) {
  ASSERT_EQ(gec("compile " + p("case/model.onnx") + " -o " + p("m.gom")).status, 0);
  Result r = gec("run " + p("m.gom") + " --input-dir " + p("case/test_data_set_0") + " --output-dir " + p("out"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("[1,4]"), std::string::npos) << r.out;
  Tensor y = frontend::read_tensor_proto_file(p("out/output_0.pb"));
  EXPECT_EQ(testing::values<float>(y), (std::vector<float>{1.5f, 0.f, 0.f, 1.f}));

  write_npy(p("x.npy"), testing::make<float>({1, 4}, {1, 1, 1, 1}).view());
  r = gec("run " + p("case/model.onnx") + " --input x=" + p("x.npy") + " --output-dir " + p("npy") + " --format npy --threads 1");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(testing::values<float>(read_npy(p("npy/output_0.npy"))), (std::vector<float>{2, 0, 3, 0}));

  r = gec("run " + p("m.gom"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("missing input 'x'"), std::string::npos) << r.out;
  write_npy(p("wrong.npy"), testing::make<float>({2, 4}, {1, 1, 1, 1, 1, 1, 1, 1}).view());
  r = gec("run " + p("m.gom") + " --input x=" + p("wrong.npy"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("float32[1,4]"), std::string::npos) << r.out;
  write_npy(p("int.npy"), testing::make<int64_t>({1, 4}, {1, 1, 1, 1}).view());
  r = gec("run " + p("m.gom") + " --input x=" + p("int.npy"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("int64"), std::string::npos) << r.out;
  EXPECT_EQ(gec("run " + p("m.gom") + " --input y=" + p("x.npy")).status, 2);
  EXPECT_EQ(gec("run " + p("m.gom") + " --input-dir " + p("case") + " --format txt").status, 2);
  // Only regular files, no larger than the declared input needs (+1 MiB):
  // /dev/zero would be read until memory runs out.
  r = gec("run " + p("m.gom") + " --input x=/dev/zero");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("not a regular file"), std::string::npos) << r.out;
  {
    std::ofstream big(p("big.npy"), std::ios::binary);
    big << std::string((1 << 20) + 4096, 'x');
  }
  r = gec("run " + p("m.gom") + " --input x=" + p("big.npy"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("bytes allowed"), std::string::npos) << r.out;
}

// xs: seq(float32) -> ys = SequenceInsert(xs, ConcatFromSequence(xs, axis 0)).
void write_sequence_model(const fs::path& path) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  m.add_opset_import()->set_version(17);
  auto* g = m.mutable_graph();
  g->set_name("seq");
  auto seq_type = [](onnx::ValueInfoProto* v, const char* name) {
    v->set_name(name);
    v->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type()->set_elem_type(
        onnx::TensorProto::FLOAT);
  };
  seq_type(g->add_input(), "xs");
  seq_type(g->add_output(), "ys");
  auto* cat = g->add_node();
  cat->set_name("cat");
  cat->set_op_type("ConcatFromSequence");
  cat->add_input("xs");
  cat->add_output("all");
  auto* axis = cat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(0);
  auto* ins = g->add_node();
  ins->set_name("append");
  ins->set_op_type("SequenceInsert");
  ins->add_input("xs");
  ins->add_input("all");
  ins->add_output("ys");
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
}

TEST_F(Cli, RunReadsAndWritesSequences) {
  write_sequence_model(dir_ / "seq.onnx");
  fs::create_directories(dir_ / "seq_in");
  const AnyValue xs = AnyValue::sequence(DType::kFloat32, {testing::make<float>({2}, {1, 2}), testing::make<float>({1}, {3})});
  frontend::write_value_proto_file(p("seq_in/input_0.pb"), xs, "xs");
  Result r = gec("run " + p("seq.onnx") + " --input-dir " + p("seq_in") + " --output-dir " + p("seq_out"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("seq(float32)[3]"), std::string::npos) << r.out;
  AnyValue ys = frontend::read_value_proto_file(p("seq_out/output_0.pb"), ValueKind::kSequence);
  ASSERT_EQ(ys.elements.size(), 3u);
  EXPECT_EQ(testing::values<float>(ys.elements[2]), (std::vector<float>{1, 2, 3}));
  // A sequence cannot come from a .npy file, and bench cannot generate one.
  write_npy(p("x.npy"), testing::make<float>({2}, {1, 2}).view());
  r = gec("run " + p("seq.onnx") + " --input xs=" + p("x.npy"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("SequenceProto"), std::string::npos) << r.out;
  r = gec("bench " + p("seq.onnx") + " --iterations 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("tensor inputs only"), std::string::npos) << r.out;
}

TEST_F(Cli, InspectAndCorruptedFiles) {
  // Unfused (autofusion would make Add + Relu one step), to see both nodes.
  ASSERT_EQ(gec("compile " + p("case/model.onnx") + " -o " + p("m.gom") + " --disable-pass autofusion").status, 0);
  Result r = gec("inspect " + p("m.gom"));
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* s : {"MODEL_DEF", "WEIGHTS", "METADATA", "x: float32[1,4]", "y: float32[1,4]", "arena"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  EXPECT_EQ(r.out.find("execution plan"), std::string::npos) << "steps only with --steps";
  // --steps: one line per step with its node, op, kernel, layouts and output placement.
  r = gec("inspect " + p("m.gom") + " --steps");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* s : {"execution plan (main graph, 2 steps, 1 stream, 0 events)", "add0", "act0", "Relu", "native", "plain", "y arena@", "s arena@"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  std::string bytes;
  {
    std::ifstream f(p("m.gom"), std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(f), {});
  }
  std::ofstream(p("trunc.gom"), std::ios::binary) << bytes.substr(0, bytes.size() - 10);
  r = gec("run " + p("trunc.gom") + " --input-dir " + p("case/test_data_set_0"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("truncated"), std::string::npos) << r.out;
  std::string flipped = bytes;
  flipped[flipped.size() - 3] ^= 0x55;
  std::ofstream(p("flip.gom"), std::ios::binary) << flipped;
  r = gec("run " + p("flip.gom") + " --input-dir " + p("case/test_data_set_0"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("checksum"), std::string::npos) << r.out;
  std::string newer = bytes;
  newer[8] = 9;  // format_version follows the 8-byte magic
  std::ofstream(p("new.gom"), std::ios::binary) << newer;
  r = gec("inspect " + p("new.gom"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("newer"), std::string::npos) << r.out;
}

// Arguments and files that used to end in "internal error" (exit 3) or a
// crash: each is a clear error with exit 2.
TEST_F(Cli, HostileArgumentsExitWithTwo) {
  ASSERT_EQ(gec("compile " + p("case/model.onnx") + " -o " + p("m.gom")).status, 0);
  Result r = gec("run " + p("m.gom") + " --input-dir " + p("case/test_data_set_0") + " --threads 100000");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--threads: Value 100000 not in range 0 to"), std::string::npos) << r.out;
  r = gec("run " + p("m.gom") + " --input-dir " + p("no_such_folder"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("no_such_folder: no such directory"), std::string::npos) << r.out;
  r = gec("run " + p("m.gom") + " --input-dir " + p("case/test_data_set_0") + " --output-dir /proc/no/such");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--output-dir"), std::string::npos) << r.out;
  r = gec("test " + p("m.gom"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("not a folder"), std::string::npos) << r.out;
  r = gec("compile " + p("case/model.onnx") + " -o " + p("big.gom") + " --max-arena-bytes 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("more than the 1 allowed (--max-arena-bytes)"), std::string::npos) << r.out;
  r = gec("compile " + p("case/model.onnx") + " -o " + p("big.gom") + " --max-weights-bytes 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("bytes of weights"), std::string::npos) << r.out;
  r = gec("run " + p("m.gom") + " --input-dir " + p("case/test_data_set_0") + " --max-arena-bytes 1");
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("activation arena"), std::string::npos) << r.out;
  // METADATA that is valid JSON of another shape: inspect shows "?" for what
  // it cannot read and exits 0.
  model::LoadedModel lm = model::read_gom_file(p("m.gom"));
  model::write_file(p("odd.gom"), model::write_gom(*lm.graph, lm.ids, lm.memory_plan, lm.execution_plan, 13,
                                                   R"({"compiler": 5, "report": [1, 2], "source_model": {}})"));
  r = gec("inspect " + p("odd.gom"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("compiled by ? ? from ?"), std::string::npos) << r.out;
  model::write_file(p("odd2.gom"), model::write_gom(*lm.graph, lm.ids, lm.memory_plan, lm.execution_plan, 13,
                                                    R"({"report": {"memory": {"arena_bytes": "many"}}})"));
  r = gec("inspect " + p("odd2.gom"));
  EXPECT_EQ(r.status, 0) << r.out;
}

// An initializer the graph also lists as an input (IR >= 4: an overridable
// default) is compiled in as a constant; an input file naming it is refused
// with a message, not silently ignored. Files are matched by the name they
// hold, whatever their position.
TEST_F(Cli, InputFilesAreMatchedByNameAndOverriddenInitializersRefused) {
  onnx::ModelProto m;
  {
    std::ifstream f(p("case/model.onnx"), std::ios::binary);
    ASSERT_TRUE(m.ParseFromIstream(&f));
  }
  auto* b = m.mutable_graph()->add_input();
  b->set_name("b");
  auto* tt = b->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(onnx::TensorProto::FLOAT);
  tt->mutable_shape()->add_dim()->set_dim_value(4);
  fs::create_directories(dir_ / "over" / "test_data_set_0");
  std::ofstream(p("over/model.onnx"), std::ios::binary) << m.SerializeAsString();
  // input_0.pb holds b, input_1.pb holds x: by name, not by position.
  frontend::write_tensor_proto_file(p("over/test_data_set_0/input_0.pb"),
                                    testing::make<float>({4}, {0, 0, 0, 0}).view(), "b");
  frontend::write_tensor_proto_file(p("over/test_data_set_0/input_1.pb"),
                                    testing::make<float>({1, 4}, {0.5f, 0.5f, -3.f, 3.f}).view(), "x");
  Result r = gec("run " + p("over/model.onnx") + " --input-dir " + p("over/test_data_set_0"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("holds 'b', which is not an input of the compiled model (inputs: x)"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("overridable default"), std::string::npos) << r.out;
  // Only x, at position 1: matched by its name.
  fs::remove(p("over/test_data_set_0/input_0.pb"));
  fs::rename(p("over/test_data_set_0/input_1.pb"), p("over/test_data_set_0/input_0.pb"));
  frontend::write_tensor_proto_file(p("over/test_data_set_0/input_1.pb"),
                                    testing::make<float>({1, 4}, {9, 9, 9, 9}).view(), "");
  r = gec("run " + p("over/model.onnx") + " --input-dir " + p("over/test_data_set_0"));
  EXPECT_EQ(r.status, 2) << "an unnamed second file for a one-input model";
  EXPECT_NE(r.out.find("the model takes 1 input(s)"), std::string::npos) << r.out;
  fs::remove(p("over/test_data_set_0/input_1.pb"));
  r = gec("run " + p("over/model.onnx") + " --input-dir " + p("over/test_data_set_0"));
  EXPECT_EQ(r.status, 0) << r.out;
}

// bench/profile --shape: generated inputs of a dynamic model take the given
// shape (trtexec's --shapes); --duration runs on until the time has passed.
TEST_F(Cli, BenchShapeForDynamicDimsAndDuration) {
  namespace ob = testing::onnx_build;
  onnx::ModelProto m = ob::new_model(13, 8);
  ob::add_input(m.mutable_graph(), "x", ob::kFloat, "N,4");
  ob::add_output(m.mutable_graph(), "y", ob::kFloat, "N,4");
  ob::add_node(m.mutable_graph(), "Relu", {"x"}, {"y"}, "relu0");
  std::ofstream(p("dyn.onnx"), std::ios::binary) << m.SerializeAsString();
  const Result compiled = gec("compile " + p("dyn.onnx") + " -o " + p("dyn.gom"));
  ASSERT_EQ(compiled.status, 0);
  // Dynamic dims without --input-shape: the note says what fixing them buys.
  EXPECT_NE(compiled.out.find("gec: note: 1 value has a shape known only at run"), std::string::npos)
      << compiled.out;
  const Result fixed = gec("compile " + p("dyn.onnx") + " -o " + p("fixed.gom") + " --input-shape x:2,4");
  ASSERT_EQ(fixed.status, 0) << fixed.out;
  EXPECT_EQ(fixed.out.find("gec: note:"), std::string::npos) << fixed.out;
  for (const std::string& model : {p("dyn.gom"), p("dyn.onnx")}) {
    Result r = gec("bench " + model + " --shape x:6,4 --warmup 0 --iterations 2 --json");
    ASSERT_EQ(r.status, 0) << r.out;
    EXPECT_EQ(nlohmann::json::parse(r.out)["batch"], 6) << "the leading dim of the generated input";
  }
  Result r = gec("profile " + p("dyn.gom") + " --shape x:3,4 --iterations 1 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_EQ(nlohmann::json::parse(r.out)["nodes"][0]["input_shapes"][0], nlohmann::json::parse("[3,4]")) << r.out;
  struct Bad {
    const char* flags;
    const char* says;
  };
  for (const Bad& b : {Bad{"--shape x:6,5", "does not fit its type x: float32[N,4]"},
                       Bad{"--shape x:6", "does not fit"},
                       Bad{"--shape z:1,4", "'z', which is not an input (inputs: x)"},
                       Bad{"--shape x:6,4 --shape x:2,4", "--shape given twice for 'x'"},
                       Bad{"--shape x6", "expected NAME:D1,D2,..."},
                       Bad{"--shape x:a,4", "'a' is not a dimension"},
                       Bad{"--duration -1", "--duration"}}) {
    r = gec("bench " + p("dyn.gom") + " --iterations 1 " + b.flags);
    EXPECT_EQ(r.status, 2) << b.flags << ": " << r.out;
    EXPECT_NE(r.out.find(b.says), std::string::npos) << b.flags << ": " << r.out;
  }
  nlohmann::json j;
  frontend::write_tensor_proto_file(p("x.pb"), testing::make<float>({1, 4}, {1, 2, 3, 4}).view(), "x");
  r = gec("bench " + p("dyn.gom") + " --iterations 1 --shape x:2,4 --input x=" + p("x.pb"));
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.out.find("--shape sets the shapes of generated inputs"), std::string::npos) << r.out;
  // --concurrency: that many requests in flight on the one Session.
  r = gec("bench " + p("dyn.gom") + " --warmup 0 --iterations 3 --concurrency 3 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  j = nlohmann::json::parse(r.out);
  EXPECT_EQ(j["concurrency"], 3);
  EXPECT_EQ(j["iterations"], 9) << "3 timed runs per request loop";
  EXPECT_GT(j["runs_per_s"].get<double>(), 0);
  EXPECT_EQ(gec("bench " + p("dyn.gom") + " --concurrency 0").status, 2);
  // --duration: at least that long and at least --iterations runs.
  r = gec("bench " + p("dyn.gom") + " --warmup 0 --iterations 1 --duration 0.2 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  j = nlohmann::json::parse(r.out);
  EXPECT_GE(j["timed_s"].get<double>(), 0.2);
  EXPECT_GT(j["iterations"].get<int>(), 1);
}

// peak_rss_bytes is gec's own address space: a caller with a large resident
// set (a Python harness, a server) must not show through. getrusage's
// ru_maxrss, kept across exec by Linux, reported the caller's.
TEST_F(Cli, BenchPeakRssIsNotTheParentProcesss) {
  ASSERT_EQ(gec("compile " + p("case/model.onnx") + " -o " + p("rss.gom")).status, 0);
  constexpr size_t kParentBytes = size_t{384} << 20;
  std::vector<char> big(kParentBytes);
  for (size_t i = 0; i < big.size(); i += 4096) big[i] = static_cast<char>(i >> 12);  // resident, page by page
  // fork + exec, as Python's subprocess does: the child's address space starts
  // as a copy of this one (popen's vfork-style spawn would not show the fault).
  const std::string gom = p("rss.gom");  // made before fork: the child only calls exec
  const std::string cmd = std::string(GEC_BINARY) + " bench " + gom + " --warmup 0 --iterations 1 --threads 1 --json";
  int fd[2];
  ASSERT_EQ(pipe(fd), 0);
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    dup2(fd[1], 1);
    close(fd[0]);
    close(fd[1]);
    execl(GEC_BINARY, GEC_BINARY, "bench", gom.c_str(), "--warmup", "0", "--iterations", "1", "--threads",
          "1", "--json", static_cast<char*>(nullptr));
    _exit(127);
  }
  close(fd[1]);
  Result r;
  std::array<char, 4096> buf;
  ssize_t n;
  while ((n = read(fd[0], buf.data(), buf.size())) > 0) r.out.append(buf.data(), static_cast<size_t>(n));
  close(fd[0]);
  int st = 0;
  ASSERT_EQ(waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st) && WEXITSTATUS(st) == 0) << cmd << "\n" << r.out;
  const nlohmann::json j = nlohmann::json::parse(r.out);
  const int64_t rss = j["peak_rss_bytes"].get<int64_t>();
  EXPECT_GT(rss, 0);
  EXPECT_LT(rss, static_cast<int64_t>(kParentBytes / 2)) << "a tiny model's bench reported " << rss << " bytes";
  // The resident set before the load (the program and its libraries) is
  // this process's own too, and below its peak.
  const int64_t before = j["rss_before_load_bytes"].get<int64_t>();
  EXPECT_GT(before, int64_t{1} << 20) << "the program and its libraries alone hold more than 1 MiB";
  EXPECT_LT(before, rss);
  volatile char keep = big[4096];  // `big` stays allocated (and resident) across the run
  (void)keep;
}

TEST_F(Cli, BenchJsonAndProfileTrace) {
  // Fused by default: one step that names the nodes it came from.
  ASSERT_EQ(gec("compile " + p("case/model.onnx") + " -o " + p("mf.gom")).status, 0);
  Result f = gec("profile " + p("mf.gom") + " --iterations 2 --top 0");
  ASSERT_EQ(f.status, 0) << f.out;
  for (const char* s : {"FusedElementwise", "add0, act0"}) EXPECT_NE(f.out.find(s), std::string::npos) << s << "\n" << f.out;
  ASSERT_EQ(gec("compile " + p("case/model.onnx") + " -o " + p("m.gom") + " --disable-pass autofusion").status, 0);
  Result r = gec("bench " + p("m.gom") + " --warmup 1 --iterations 3 --threads 1 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  for (const char* k : {"median_ms", "p90_ms", "p99_ms", "min_ms", "max_ms", "load_ms", "first_run_ms",
                        "peak_rss_bytes", "threads", "iterations"})
    EXPECT_TRUE(j[k].is_number()) << k;
  EXPECT_EQ(j["iterations"], 3);
  EXPECT_EQ(j["threads"], 1);
  EXPECT_EQ(j["batch"], 1);  // x is [1,4]
  EXPECT_DOUBLE_EQ(j["runs_per_s"].get<double>(), 1000.0 / j["median_ms"].get<double>());
  EXPECT_DOUBLE_EQ(j["samples_per_s"].get<double>(), j["runs_per_s"].get<double>());
  // Compile flags do not apply to an offline model: refused, not ignored.
  for (const char* flag : {"--input-shape x:1,4", "-O 3", "--disable-pass cse"}) {
    r = gec("bench " + p("m.gom") + " --iterations 1 " + flag);
    EXPECT_EQ(r.status, 2) << flag;
    EXPECT_NE(r.out.find("applies when compiling a model (.onnx, .pb, model.json)"), std::string::npos) << r.out;
  }
  ASSERT_EQ(gec("compile " + p("case/model.onnx") + " -o " + p("m3.gom") + " -O 3 --input-shape x:1,4").status, 0);
  r = gec("inspect " + p("m3.gom"));
  EXPECT_NE(r.out.find("compile options: -O3 --input-shape x:1,4"), std::string::npos) << r.out;
  EXPECT_LE(j["min_ms"].get<double>(), j["median_ms"].get<double>());
  EXPECT_LE(j["median_ms"].get<double>(), j["max_ms"].get<double>());
  r = gec("bench " + p("m.gom") + " --iterations 2 --input-dir " + p("case/test_data_set_0"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("median"), std::string::npos);
  EXPECT_EQ(gec("bench " + p("m.gom") + " --iterations 0").status, 2);

  r = gec("profile " + p("m.gom") + " --iterations 2 --top 0 --trace " + p("t.json"));
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* s : {"act0", "add0", "Relu", "Add", "total"}) EXPECT_NE(r.out.find(s), std::string::npos) << s;
  r = gec("profile " + p("m.gom") + " --iterations 2 --top 1");
  EXPECT_EQ(r.out.find("act0") == std::string::npos, r.out.find("add0") != std::string::npos) << "--top 1 shows one node";
  auto t = nlohmann::json::parse(std::ifstream(p("t.json")));
  ASSERT_TRUE(t["traceEvents"].is_array());
  // One event per node call, in start order: add0, act0 of each of the 2 runs.
  ASSERT_EQ(t["traceEvents"].size(), 4u);
  for (size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(t["traceEvents"][i]["ph"], "X");
    EXPECT_EQ(t["traceEvents"][i]["name"], i % 2 ? "act0" : "add0") << i;
    if (i) {
      EXPECT_GE(t["traceEvents"][i]["ts"].get<double>(), t["traceEvents"][i - 1]["ts"].get<double>());
    }
  }
  r = gec("profile " + p("m.gom") + " --iterations 2 --json");
  ASSERT_EQ(r.status, 0) << r.out;
  auto pj = nlohmann::json::parse(r.out);
  EXPECT_EQ(pj["iterations"], 2);
  ASSERT_EQ(pj["nodes"].size(), 2u);
  EXPECT_EQ(pj["nodes"][0]["name"], "add0");
  EXPECT_EQ(pj["nodes"][0]["calls"], 2);
}

// x[1,16,32,32] -> Conv(16 -> 16, 3x3, pads 1) -> y: a oneDNN primitive
// that opens a parallel region on every run.
void write_conv_model(const fs::path& path) {
  namespace ob = testing::onnx_build;
  onnx::ModelProto m = ob::new_model(13);
  auto* g = m.mutable_graph();
  ob::add_input(g, "x", ob::kFloat, "1,16,32,32");
  ob::add_output(g, "y", ob::kFloat, "1,16,32,32");
  ob::add_float_init(g, "w", {16, 16, 3, 3}, std::vector<float>(16 * 16 * 9, 0.01f));
  auto* c = ob::add_node(g, "Conv", {"x", "w"}, {"y"});
  ob::attr_ints(c, "pads", {1, 1, 1, 1});
  std::ofstream(path, std::ios::binary) << m.SerializeAsString();
}

// How many threads a run uses and how idle ones wait (gec/threading.h):
// --threads 1 starts no OpenMP worker; --spin off asks OpenMP for PASSIVE
// unless the environment chose (the tests' environment sets OMP_WAIT_POLICY).
TEST_F(Cli, ThreadCountAndWaitPolicy) {
  write_conv_model(dir_ / "conv.onnx");
  ASSERT_EQ(gec("compile " + p("conv.onnx") + " -o " + p("conv.gom")).status, 0);
  const std::string bench = "bench " + p("conv.gom") + " --warmup 1 --iterations 2 --json";
  auto json_of = [](const Result& r) {
    EXPECT_EQ(r.status, 0) << r.out;
    return nlohmann::json::parse(r.out);
  };
  // Adapting to a busy machine (other tests run beside this one) may use
  // fewer threads than asked: off here, where the count is what is tested.
  EXPECT_EQ(json_of(gec(bench + " --threads 1 --adapt-threads off"))["os_threads"], 1);
  EXPECT_EQ(json_of(gec(bench + " --threads 2 --adapt-threads off"))["os_threads"], 2);
  EXPECT_EQ(json_of(gec(bench + " --threads 1"))["openmp_wait_policy"], "passive");
  auto run_clean = [](const std::string& args) { return gec(args, "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT "); };
  EXPECT_EQ(json_of(run_clean(bench))["openmp_wait_policy"], "libgomp default (spin 300000)");
  EXPECT_EQ(json_of(run_clean(bench + " --spin on"))["openmp_wait_policy"], "libgomp default (spin 300000)");
  EXPECT_EQ(json_of(run_clean(bench + " --spin off"))["openmp_wait_policy"], "passive");
  EXPECT_EQ(json_of(run_clean(bench + " --spin=off"))["openmp_wait_policy"], "passive");
  EXPECT_EQ(run_clean(bench + " --spin sometimes").status, 2);
}

// Accuracy debugging: --extra-outputs, run --dump-tensors, and compare
// naming the first value that differs from stored tensors (one of them
// altered here: the injected divergence).
TEST_F(Cli, DumpTensorsAndCompareFindAnInjectedDivergence) {
  const std::string model = p("case/model.onnx"), in = " --input-dir " + p("case/test_data_set_0");
  ASSERT_EQ(gec("compile " + model + " -o " + p("x.gom") + " --extra-outputs s").status, 0);
  Result r = gec("inspect " + p("x.gom"));
  EXPECT_NE(r.out.find("  s: float32[1,4]"), std::string::npos) << r.out;
  EXPECT_EQ(gec("compile " + model + " -o " + p("x.gom") + " --extra-outputs nope").status, 2);

  r = gec("run " + model + in + " -O 0 --dump-tensors " + p("dump"));
  ASSERT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("dumped 2 tensors"), std::string::npos) << r.out;
  auto index = nlohmann::json::parse(std::ifstream(p("dump/index.json")));
  ASSERT_EQ(index.size(), 2u);
  std::string got_name;
  Tensor s = frontend::read_tensor_proto_file(p("dump/s.pb"), &got_name);
  EXPECT_EQ(got_name, "s");
  EXPECT_EQ(testing::values<float>(s), (std::vector<float>{1.5f, -0.5f, -1.f, 1.f}));  // x + b
  EXPECT_EQ(gec("run " + p("x.gom") + in + " --dump-tensors " + p("dump2")).status, 2) << "needs the .onnx";

  r = gec("compare " + model + in + " -O 3");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("0 differ"), std::string::npos) << r.out;
  r = gec("compare " + model + in + " -O 0 --reference " + p("dump"));
  EXPECT_EQ(r.status, 0) << r.out;
  // Alter the stored s and y: compare names s (its node comes first, though
  // the model output y is the session's first output), its op and the error.
  frontend::write_tensor_proto_file(p("dump/s.pb"), testing::make<float>({1, 4}, {1.5f, -0.5f, -1.f, 3.f}).view(), "s");
  frontend::write_tensor_proto_file(p("dump/y.pb"), testing::make<float>({1, 4}, {9.f, 9.f, 9.f, 9.f}).view(), "y");
  r = gec("compare " + model + in + " -O 0 --reference " + p("dump"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("2 values compared (atol 0.0001, rtol 0.001), 2 differ"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("first difference: value 's' (node 'add0', op Add): 1 of 4 elements differ, max abs error 2"),
            std::string::npos)
      << r.out;
}

// gec ops: every op with a kernel, its domain, the opsets it imports from and its dtypes.
TEST_F(Cli, OpsListsDomainsAndOpsets) {
  Result r = gec("ops");
  ASSERT_EQ(r.status, 0) << r.out;
  for (const char* line : {"ai.onnx          Conv                        opsets 1-23                      float32\n",
                           "ai.onnx          BitwiseAnd                  opsets 18-23                     int8,int16,",
                           "com.graphengine  FusedConv                   internal (made by the compiler)  float32",
                           "ai.onnx          Identity                    opsets 1-23                      all\n",
                           "ai.onnx          GroupNormalization          opsets 18-23                     (rewritten"})
    EXPECT_NE(r.out.find(line), std::string::npos) << line << "\n" << r.out.substr(0, 2000);
  r = gec("ops --json --domain com.graphengine");
  ASSERT_EQ(r.status, 0) << r.out;
  auto j = nlohmann::json::parse(r.out);
  ASSERT_FALSE(j.empty());
  for (const auto& op : j) EXPECT_EQ(op["domain"], "com.graphengine");
  r = gec("ops --json");
  bool saw_add = false;
  for (const auto& op : nlohmann::json::parse(r.out))
    if (op["op_type"] == "Add") {
      saw_add = true;
      EXPECT_NE(std::find(op["dtypes"].begin(), op["dtypes"].end(), "int64"), op["dtypes"].end()) << op.dump();
      EXPECT_EQ(std::find(op["dtypes"].begin(), op["dtypes"].end(), "string"), op["dtypes"].end()) << op.dump();
    }
  EXPECT_TRUE(saw_add);
}

TEST_F(Cli, TestCommandCountsAndExpectations) {
  Result r = gec("test " + p("case") + " -O 0 -O 3");
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("1 passed, 0 failed, 0 skipped"), std::string::npos) << r.out;
  // Levels before several paths: each -O takes one value, the paths stay paths.
  r = gec("test -O 0 -O 3 " + p("case") + " " + p("case"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("2 passed, 0 failed, 0 skipped"), std::string::npos) << r.out;
  // --disable-pass applies to every compile; an unknown name is a usage
  // error naming it (exit 2, before any folder runs).
  r = gec("test " + p("case") + " -O 3 --static-shapes --disable-pass autofusion");
  EXPECT_EQ(r.status, 0) << r.out;
  // One name per flag, repeatable: names before the paths leave them paths.
  r = gec("test --disable-pass winograd --disable-pass cse " + p("case") + " " + p("case"));
  EXPECT_EQ(r.status, 0) << r.out;
  EXPECT_NE(r.out.find("2 passed, 0 failed, 0 skipped"), std::string::npos) << r.out;
  r = gec("test " + p("case") + " --disable-pass no_such_pass");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_EQ(r.out.find("passed"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("unknown pass or rule 'no_such_pass' (passes: "), std::string::npos) << r.out;
  // The names by kind, each once: passes, rules, stages.
  for (const char* s : {"(passes: ", "; rules: ", "; stages: layout_propagation, "})
    EXPECT_NE(r.out.find(s), std::string::npos) << s << "\n" << r.out;
  const size_t first = r.out.find("im2col_conv");
  EXPECT_EQ(r.out.find("im2col_conv", first + 1), std::string::npos) << "a name listed twice:\n" << r.out;
  // A misspelt name: the closest one is suggested.
  r = gec("test " + p("case") + " --disable-pass layout_propagaton");
  EXPECT_EQ(r.status, 2) << r.out;
  EXPECT_NE(r.out.find("'layout_propagaton' (did you mean 'layout_propagation'? passes: "), std::string::npos) << r.out;
  // A wrong reference makes it fail, exit 1.
  frontend::write_tensor_proto_file(p("case/test_data_set_0/output_0.pb"),
                                    testing::make<float>({1, 4}, {9, 9, 9, 9}).view(), "y");
  r = gec("test " + p("case"));
  EXPECT_EQ(r.status, 1) << r.out;
  EXPECT_NE(r.out.find("0 passed, 1 failed, 0 skipped"), std::string::npos) << r.out;
  std::ofstream(p("expect.txt")) << "# comment\ncase fail the reference is wrong on purpose\n";
  r = gec("test " + p("case") + " --expect " + p("expect.txt"));
  EXPECT_EQ(r.status, 0) << r.out;
  std::ofstream(p("expect.txt")) << "case shape-only random outputs\n";
  r = gec("test " + p("case") + " --expect " + p("expect.txt"));
  EXPECT_EQ(r.status, 0) << r.out;
  std::ofstream(p("expect.txt")) << "case skip hangs\n";
  r = gec("test " + p("case") + " --expect " + p("expect.txt"));
  EXPECT_NE(r.out.find("0 passed, 0 failed, 1 skipped"), std::string::npos) << r.out;
  std::ofstream(p("expect.txt")) << "case fail\n";  // no reason
  EXPECT_EQ(gec("test " + p("case") + " --expect " + p("expect.txt")).status, 2);
  EXPECT_EQ(gec("test " + p("no_such_dir")).status, 2);
}

}  // namespace
}  // namespace gec
