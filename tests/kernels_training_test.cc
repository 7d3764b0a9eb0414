// Training-mode ops: Dropout-13 with training_mode (kernels/cpu/nn/dropout.cc)
// and com.graphengine::BatchNormalizationTraining, the training_mode=1 form
// of BatchNormalization-15 (kernels/cpu/nn/batchnorm_training.cc); their
// frontend rewrites (canonicalize.cc), and the -O3 pipeline leaving the
// random Dropout alone (no folding, no merging). Expected values are worked
// out by hand from the ONNX operator text.
#include <gtest/gtest.h>

#include "frontend/onnx/importer.h"
#include "onnx/onnx_pb.h"
#include "passes_util.h"

namespace gec {
namespace {
using namespace gec::testing;
using namespace gec::passes::testing;

Tensor scalar_f(float v) { return make<float>({}, {v}); }
Tensor scalar_b(bool v) { return make<bool>({}, {v}); }

std::vector<float> iota_f(size_t n, float start = 1.f) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = start + static_cast<float>(i);
  return v;
}

// ---- Dropout ----------------------------------------------------------------------

// ratio 0 in training mode: output = data, mask all true (15 elements: not a
// multiple of any vector width).
TEST(DropoutTraining, ZeroRatioIsIdentityWithAllTrueMask) {
  const std::vector<float> x = iota_f(15, -7.f);
  auto out = run_op("Dropout", {make<float>({3, 5}, x), scalar_f(0.f), scalar_b(true)}, {}, 2);
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].shape(), (Shape{3, 5}));
  EXPECT_EQ(values<float>(out[0]), x);
  EXPECT_EQ(out[1].dtype(), DType::kBool);
  EXPECT_EQ(values<bool>(out[1]), std::vector<bool>(15, true));
}

// training_mode false: ratio is ignored, output = data, mask all true.
TEST(DropoutTraining, InferenceModeIgnoresRatio) {
  const std::vector<float> x = iota_f(7);
  auto out = run_op("Dropout", {make<float>({7}, x), scalar_f(0.75f), scalar_b(false)}, {}, 2);
  EXPECT_EQ(values<float>(out[0]), x);
  EXPECT_EQ(values<bool>(out[1]), std::vector<bool>(7, true));
  // No training_mode input at all: inference too.
  auto out2 = run_op("Dropout", {make<float>({7}, x)}, {}, 2);
  EXPECT_EQ(values<float>(out2[0]), x);
  EXPECT_EQ(values<bool>(out2[1]), std::vector<bool>(7, true));
}

// ratio 0.75: a kept element is x / (1 - 0.75) = 4x, a dropped one 0, and the
// mask says which; about a quarter is kept (1000 draws: 250 +- 14 sd).
TEST(DropoutTraining, MaskAndScaleAgree) {
  const std::vector<float> x = iota_f(1000);
  auto out = run_op("Dropout", {make<float>({10, 100}, x), scalar_f(0.75f), scalar_b(true)},
                    {ir::Attribute::Int("seed", 7)}, 2);
  const auto y = values<float>(out[0]);
  const auto mask = values<bool>(out[1]);
  int kept = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(y[i], mask[i] ? 4.f * x[i] : 0.f) << i;
    kept += mask[i];
  }
  EXPECT_GT(kept, 170);
  EXPECT_LT(kept, 330);
  // The same seed attribute gives the same first mask.
  auto again = run_op("Dropout", {make<float>({10, 100}, x), scalar_f(0.75f), scalar_b(true)},
                      {ir::Attribute::Int("seed", 7)}, 2);
  EXPECT_EQ(values<bool>(again[1]), mask);
}

// float64 data, default ratio 0.5 (scale 2), no mask output.
TEST(DropoutTraining, Float64DefaultRatioWithoutMaskOutput) {
  std::vector<double> x(33);
  for (size_t i = 0; i < x.size(); ++i) x[i] = 0.5 + static_cast<double>(i);
  auto out = run_op("Dropout", {make<double>({33}, x), Tensor(), scalar_b(true)}, {}, 1);
  ASSERT_EQ(out.size(), 1u);
  const auto y = values<double>(out[0]);
  int zeros = 0;
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_TRUE(y[i] == 0.0 || y[i] == 2.0 * x[i]) << i << ": " << y[i];
    zeros += y[i] == 0.0;
  }
  EXPECT_GT(zeros, 0);  // P(no drop in 33) = 2^-33
  EXPECT_LT(zeros, 33);
}

TEST(DropoutTraining, RatioOutsideZeroToOneIsRejectedInTraining) {
  for (float r : {1.f, 1.5f, -0.1f}) {
    try {
      run_op("Dropout", {make<float>({2}, {1, 2}), scalar_f(r), scalar_b(true)});
      ADD_FAILURE() << "ratio " << r << " accepted";
    } catch (const Error& e) {
      EXPECT_EQ(e.code(), ErrorCode::kInvalidArgument) << e.what();
      EXPECT_NE(std::string(e.what()).find("ratio"), std::string::npos) << e.what();
    }
  }
  // Outside training the ratio is not used, so not checked.
  auto out = run_op("Dropout", {make<float>({2}, {1, 2}), scalar_f(1.f), scalar_b(false)});
  EXPECT_EQ(values<float>(out[0]), (std::vector<float>{1, 2}));
}

TEST(DropoutTraining, EmptyAndScalarInputs) {
  auto empty = run_op("Dropout", {Tensor(DType::kFloat32, {0, 3}), scalar_f(0.5f), scalar_b(true)}, {}, 2);
  EXPECT_EQ(empty[0].shape(), (Shape{0, 3}));
  EXPECT_EQ(empty[1].shape(), (Shape{0, 3}));
  auto scalar = run_op("Dropout", {scalar_f(3.f), scalar_f(0.f), scalar_b(true)}, {}, 2);
  EXPECT_EQ(scalar[0].shape(), Shape{});
  EXPECT_EQ(values<float>(scalar[0]), (std::vector<float>{3.f}));
  EXPECT_EQ(values<bool>(scalar[1]), (std::vector<bool>{true}));
}

// ---- BatchNormalizationTraining --------------------------------------------------

std::vector<Tensor> bn_training(const Tensor& x, const std::vector<float>& scale, const std::vector<float>& b,
                                const std::vector<float>& mean, const std::vector<float>& var,
                                std::vector<ir::Attribute> attrs, size_t outputs = 3) {
  const int64_t c = static_cast<int64_t>(scale.size());
  return run_op("BatchNormalizationTraining",
                {x, make<float>({c}, scale), make<float>({c}, b), make<float>({c}, mean), make<float>({c}, var)},
                std::move(attrs), outputs, "com.graphengine");
}

// X [N=2, C=2, 2]: channel 0 holds 1,3,5,7 (mean 4, population var 5),
// channel 1 holds 2,2,2,2 (mean 2, var 0). epsilon 4, so channel 0 divides by
// sqrt(9) = 3 and channel 1 by sqrt(4) = 2. momentum 0.5:
//   running_mean = 0.5 * [0, 10] + 0.5 * [4, 2] = [2, 6]
//   running_var  = 0.5 * [1, 1]  + 0.5 * [5, 0] = [3, 0.5]
TEST(BatchNormTraining, HandComputedBatchStatistics) {
  auto out = bn_training(make<float>({2, 2, 2}, {1, 3, 2, 2, 5, 7, 2, 2}), {1, 2}, {0, 1}, {0, 10}, {1, 1},
                         {ir::Attribute::Float("epsilon", 4.f), ir::Attribute::Float("momentum", 0.5f)});
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[0].shape(), (Shape{2, 2, 2}));
  // channel 0: (x - 4) / 3 * 1 + 0; channel 1: (2 - 2) / 2 * 2 + 1 = 1.
  expect_close(values<float>(out[0]), {-1.f, -1.f / 3, 1, 1, 1.f / 3, 1, 1, 1});
  EXPECT_EQ(out[1].shape(), (Shape{2}));
  expect_close(values<float>(out[1]), {2, 6});
  expect_close(values<float>(out[2]), {3, 0.5f});
}

// Rank 2 (no spatial axes), epsilon 0, default momentum 0.9: channel 0 holds
// 1,3 (mean 2, var 1), channel 1 holds 2,6 (mean 4, var 4).
//   Y = [[-1, -1], [1, 1]]; running_mean = 0.1 * [2, 4]; running_var = 0.1 * [1, 4].
TEST(BatchNormTraining, Rank2DefaultMomentum) {
  auto out = bn_training(make<float>({2, 2}, {1, 2, 3, 6}), {1, 1}, {0, 0}, {0, 0}, {0, 0},
                         {ir::Attribute::Float("epsilon", 0.f)});
  expect_close(values<float>(out[0]), {-1, -1, 1, 1});
  expect_close(values<float>(out[1]), {0.2f, 0.4f});
  expect_close(values<float>(out[2]), {0.1f, 0.4f});
}

// Only Y requested; a single element per channel has variance 0, so
// Y = 0 * scale / sqrt(eps) + B = B. 3 channels x 1 element, N = 1.
TEST(BatchNormTraining, OnlyYAndSingleElementChannels) {
  auto out = bn_training(make<float>({1, 3}, {5, -2, 9}), {2, 3, 4}, {0.5f, -1, 7}, {0, 0, 0}, {1, 1, 1},
                         {ir::Attribute::Float("epsilon", 1e-5f)}, 1);
  ASSERT_EQ(out.size(), 1u);
  expect_close(values<float>(out[0]), {0.5f, -1, 7});
}

// ---- frontend ---------------------------------------------------------------------

void set_type(onnx::ValueInfoProto* vi, const std::string& name, int elem, const std::vector<int64_t>& dims) {
  vi->set_name(name);
  auto* tt = vi->mutable_type()->mutable_tensor_type();
  tt->set_elem_type(elem);
  tt->mutable_shape();
  for (int64_t d : dims) tt->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::ModelProto model(int64_t opset) {
  onnx::ModelProto m;
  m.set_ir_version(8);
  auto* imp = m.add_opset_import();
  imp->set_domain("");
  imp->set_version(opset);
  m.mutable_graph()->set_name("main");
  return m;
}

std::unique_ptr<ir::Graph> import(const onnx::ModelProto& m) {
  return frontend::import_onnx_bytes(m.SerializeAsString(), ".").graph;
}

const ir::Node* find_op(const ir::Graph& g, const std::string& op) {
  for (const auto& n : g.nodes())
    if (n->op_type == op) return n.get();
  return nullptr;
}

constexpr int kF = onnx::TensorProto::FLOAT, kB = onnx::TensorProto::BOOL;

// Dropout-13 whose training_mode is a graph input stays a Dropout with its
// three inputs and both outputs; a constant false one becomes Identity.
TEST(TrainingFrontend, DropoutKeepsRuntimeTrainingMode) {
  for (bool constant_false : {false, true}) {
    onnx::ModelProto m = model(13);
    auto* g = m.mutable_graph();
    set_type(g->add_input(), "x", kF, {2, 3});
    set_type(g->add_input(), "r", kF, {});
    if (constant_false) {
      auto* t = g->add_initializer();
      t->set_name("t");
      t->set_data_type(kB);
      t->add_int32_data(0);
    } else {
      set_type(g->add_input(), "t", kB, {});
    }
    auto* n = g->add_node();
    n->set_op_type("Dropout");
    n->set_name("drop");
    for (const char* i : {"x", "r", "t"}) n->add_input(i);
    n->add_output("y");
    n->add_output("mask");
    auto* seed = n->add_attribute();
    seed->set_name("seed");
    seed->set_type(onnx::AttributeProto::INT);
    seed->set_i(3);
    set_type(g->add_output(), "y", kF, {2, 3});
    set_type(g->add_output(), "mask", kB, {2, 3});
    auto gr = import(m);
    const ir::Node* d = find_op(*gr, "Dropout");
    if (constant_false) {
      EXPECT_EQ(d, nullptr);
      EXPECT_NE(find_op(*gr, "Identity"), nullptr);
      continue;
    }
    ASSERT_NE(d, nullptr);
    EXPECT_EQ(d->inputs().size(), 3u);
    EXPECT_EQ(d->outputs().size(), 2u);
    EXPECT_EQ(d->get_int("seed"), 3);
    EXPECT_EQ(d->output(1)->type.dtype, DType::kBool);
  }
}

// BatchNormalization-15 training_mode=1 -> com.graphengine::BatchNormalizationTraining
// with momentum and epsilon kept; training_mode=0 stays the 1-output form.
TEST(TrainingFrontend, BatchNormTrainingModeIsRewritten) {
  for (int64_t mode : {1, 0}) {
    onnx::ModelProto m = model(15);
    auto* g = m.mutable_graph();
    set_type(g->add_input(), "x", kF, {2, 3, 4});
    for (const char* p : {"s", "b", "m", "v"}) set_type(g->add_input(), p, kF, {3});
    auto* n = g->add_node();
    n->set_op_type("BatchNormalization");
    n->set_name("bn");
    for (const char* i : {"x", "s", "b", "m", "v"}) n->add_input(i);
    n->add_output("y");
    if (mode) {
      n->add_output("rm");
      n->add_output("rv");
    }
    for (auto [name, f] : {std::pair<const char*, float>{"epsilon", 0.25f}, {"momentum", 0.75f}}) {
      auto* a = n->add_attribute();
      a->set_name(name);
      a->set_type(onnx::AttributeProto::FLOAT);
      a->set_f(f);
    }
    auto* t = n->add_attribute();
    t->set_name("training_mode");
    t->set_type(onnx::AttributeProto::INT);
    t->set_i(mode);
    set_type(g->add_output(), "y", kF, {2, 3, 4});
    if (mode) {
      set_type(g->add_output(), "rm", kF, {3});
      set_type(g->add_output(), "rv", kF, {3});
    }
    auto gr = import(m);
    if (!mode) {
      const ir::Node* bn = find_op(*gr, "BatchNormalization");
      ASSERT_NE(bn, nullptr);
      EXPECT_EQ(bn->outputs().size(), 1u);
      continue;
    }
    EXPECT_EQ(find_op(*gr, "BatchNormalization"), nullptr);
    const ir::Node* bn = find_op(*gr, "BatchNormalizationTraining");
    ASSERT_NE(bn, nullptr);
    EXPECT_EQ(bn->domain, "com.graphengine");
    EXPECT_EQ(bn->outputs().size(), 3u);
    EXPECT_FALSE(bn->has_attr("training_mode"));
    EXPECT_EQ(bn->get_float("momentum", 0.f), 0.75f);
    EXPECT_EQ(bn->get_float("epsilon", 0.f), 0.25f);
  }
}

// ---- passes -----------------------------------------------------------------------

// Two training Dropouts of the same constant inputs: at -O3 constant folding
// must not evaluate them (each run draws a new mask) and CSE must not merge
// them; a deterministic twin pair (Relu) next to them is merged, showing the
// passes did run. (Graph outputs never merge, so the twins feed Adds.)
TEST(TrainingPasses, O3NeitherFoldsNorMergesTrainingDropout) {
  ir::Graph g;
  ir::Value* x = g.add_constant("x", make<float>({64}, iota_f(64)));
  ir::Value* r = g.add_constant("r", scalar_f(0.5f));
  ir::Value* t = g.add_constant("t", scalar_b(true));
  ir::Value* in = input(g, "in", {64});
  ir::Node* d1 = g.add_node("Dropout", {x, r, t}, {"d1"});
  ir::Node* d2 = g.add_node("Dropout", {x, r, t}, {"d2"});
  ir::Node* r1 = g.add_node("Relu", {in}, {"r1"});
  ir::Node* r2 = g.add_node("Relu", {in}, {"r2"});
  ir::Node* dsum = g.add_node("Add", {d1->output(0), d2->output(0)}, {"dsum"});
  ir::Node* rsum = g.add_node("Add", {r1->output(0), r2->output(0)}, {"rsum"});
  g.outputs().push_back(dsum->output(0));
  g.outputs().push_back(rsum->output(0));
  passes::infer_static_shapes(g);
  CompileOptions o;
  o.verify_each_pass = true;
  o.disabled_passes = {"autofusion"};  // it would fuse the Relu into the Add
  passes::make_pipeline(3).run(g, o);
  int dropouts = 0, relus = 0;
  for (const auto& n : g.nodes()) {
    dropouts += n->op_type == "Dropout";
    relus += n->op_type == "Relu";
  }
  EXPECT_EQ(dropouts, 2);
  EXPECT_EQ(relus, 1);
  ASSERT_EQ(g.outputs().size(), 2u);
  EXPECT_FALSE(g.outputs()[0]->is_constant());
  // Each element of d1 + d2 is 0, 2x or 4x (scale 1 / (1 - 0.5) = 2).
  auto outs = run_graph(g, {{"in", make<float>({64}, iota_f(64))}});
  const auto y = values<float>(outs[0]);
  for (size_t i = 0; i < y.size(); ++i) {
    const float xi = 1.f + static_cast<float>(i);
    EXPECT_TRUE(y[i] == 0.f || y[i] == 2.f * xi || y[i] == 4.f * xi) << i << ": " << y[i];
  }
}

}  // namespace
}  // namespace gec
