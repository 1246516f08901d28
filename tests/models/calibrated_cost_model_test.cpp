#include "models/calibrated_cost_model.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "models/catalog.h"
#include "models/config_error.h"
#include "models/model_spec.h"
#include "models/parallel_config.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

CalibrationProfile make_profile(const std::string& model) {
  CalibrationProfile p;
  p.model = model;
  p.backend = "cpu";
  p.device = "test CPU";
  for (size_t op = 0; op < kNumOps; ++op) {
    const size_t n = op_feature_names(static_cast<Op>(op)).size();
    for (size_t k = 0; k < n; ++k)
      p.coefficients[op].push_back(1e-9 * static_cast<double>(op + k + 1));
  }
  p.range = {.max_tokens = 512, .max_seqs = 32, .max_context = 1024};
  p.fit.samples = 120;
  p.fit.shapes = 40;
  p.fit.folds = 5;
  p.fit.step = {0.03, 0.99};
  p.fit.ops[static_cast<size_t>(Op::kMlp)] = {0.02, 0.995};
  p.rates.gemm_flops_per_s = 2e10;
  p.environment = {{"date", "2026-11-29T00:00:00Z"}};
  return p;
}

ModelSpec model(const std::string& name) {
  return Catalog().resolve_model(name);
}

TEST(CalibrationProfile, RoundTripsThroughJson) {
  const CalibrationProfile p = make_profile("Llama-100M-bench");
  const CalibrationProfile q = profile_from_json(profile_to_json(p), "test");
  EXPECT_EQ(q.model, p.model);
  EXPECT_EQ(q.coefficients, p.coefficients);
  EXPECT_EQ(q.range.max_context, 1024);
  EXPECT_EQ(q.fit.shapes, 40);
  EXPECT_DOUBLE_EQ(q.fit.ops[static_cast<size_t>(Op::kMlp)].r2, 0.995);
  EXPECT_EQ(q.environment, p.environment);
  EXPECT_EQ(profile_to_json(q), profile_to_json(p));

  CalibrationProfile scaled = p;
  scaled.row_scales[static_cast<size_t>(Op::kMlp)] = RowScale({{16, 0.9}, {24, 1.4}}, "test");
  const CalibrationProfile r = profile_from_json(profile_to_json(scaled), "test");
  ASSERT_EQ(r.row_scales[static_cast<size_t>(Op::kMlp)].points().size(), 2u);
  EXPECT_DOUBLE_EQ(r.row_scales[static_cast<size_t>(Op::kMlp)].at(24), 1.4);
  EXPECT_TRUE(r.row_scales[static_cast<size_t>(Op::kQkv)].empty());
  EXPECT_EQ(profile_to_json(r), profile_to_json(scaled));

  CalibrationProfile referenced = p;
  referenced.reference_steps = {{{{1, 511, false}, {1, 511, false}}, 0.05}, {{{64, 0, true}}, 0.2}};
  const CalibrationProfile t = profile_from_json(profile_to_json(referenced), "test");
  ASSERT_EQ(t.reference_steps.size(), 2u);
  EXPECT_EQ(t.reference_steps[0].seqs, referenced.reference_steps[0].seqs);
  EXPECT_DOUBLE_EQ(t.reference_steps[1].step_s, 0.2);
  EXPECT_TRUE(t.reference_steps[1].seqs[0].prefill);

  const std::string path =
      (std::filesystem::temp_directory_path() / "servesim_profile_roundtrip.json").string();
  save_profile(p, path);
  EXPECT_EQ(profile_to_json(load_profile(path)), profile_to_json(p));
}

TEST(CalibrationProfile, MalformedFilesAreOneLineErrors) {
  nlohmann::json j = profile_to_json(make_profile("Llama-100M-bench"));
  nlohmann::json bad = j;
  bad["seconds_per_unit"]["mlp"]["flops"] = -1.0;
  EXPECT_THAT([&] { profile_from_json(bad, "p.json"); },
              ThrowsMessage<ConfigError>(HasSubstr("p.json: seconds_per_unit.mlp: flops")));
  bad = j;
  bad["seconds_per_unit"].erase("qkv");
  EXPECT_THAT([&] { profile_from_json(bad, "p.json"); },
              ThrowsMessage<ConfigError>(HasSubstr("qkv")));
  bad = j;
  bad["servesim_profile"] = 99;
  EXPECT_THAT([&] { profile_from_json(bad, "p.json"); },
              ThrowsMessage<ConfigError>(HasSubstr("re-run servesim calibrate fit")));
  bad = j;
  bad["backend"] = "tpu";
  EXPECT_THROW(profile_from_json(bad, "p.json"), ConfigError);
  bad = j;
  bad["row_scale"] = {{"mlp", {{16, 1.0}, {8, 1.1}}}};
  EXPECT_THAT([&] { profile_from_json(bad, "p.json"); },
              ThrowsMessage<ConfigError>(HasSubstr("p.json: row_scale.mlp: rows must strictly")));
  bad["row_scale"] = {{"mlp", {{16, 1.0, 3}}}};
  EXPECT_THAT([&] { profile_from_json(bad, "p.json"); },
              ThrowsMessage<ConfigError>(HasSubstr("[rows, factor] pairs")));
  bad["row_scale"] = {{"attention_decode", {{16, 1.0}}}};
  EXPECT_THAT([&] { profile_from_json(bad, "p.json"); },
              ThrowsMessage<ConfigError>(HasSubstr("is not a GEMM op")));
  bad["row_scale"] = {{"mpl", {{16, 1.0}}}};
  EXPECT_THAT([&] { profile_from_json(bad, "p.json"); },
              ThrowsMessage<ConfigError>(HasSubstr("mpl")));
  bad = j;
  bad["reference_steps"] = {{{"seqs", {{64, 0}}}, {"step_s", 0.1}}};
  EXPECT_THAT([&] { profile_from_json(bad, "p.json"); },
              ThrowsMessage<ConfigError>(HasSubstr("p.json: reference_steps[0]: seqs")));
  bad["reference_steps"] = {{{"seqs", {{64, 0, true}}}, {"step_s", 0.0}}};
  EXPECT_THAT([&] { profile_from_json(bad, "p.json"); },
              ThrowsMessage<ConfigError>(HasSubstr("step_s")));
  bad = j;
  bad["extra"] = 1;
  EXPECT_THAT([&] { profile_from_json(bad, "p.json"); },
              ThrowsMessage<ConfigError>(HasSubstr("extra")));
}

TEST(CalibratedCostModel, PredictsTheDotProductOfCoefficientsAndFeatures) {
  const CalibrationProfile p = make_profile("Llama-100M-bench");
  const ModelSpec m = model("Llama-100M-bench");
  const CalibratedCostModel cm(p, m, ParallelConfig{});
  BatchShape shape;
  shape.add_sequence(128, 0, true, true);
  shape.add_sequence(1, 300, false, true);
  const StepTime t = cm.predict(shape);
  const CostFeatures f(m, DType::kFp32, DType::kFp32);
  double total = 0;
  for (size_t op = 0; op < kNumOps; ++op) {
    const OpFeatureValues v = f.features(static_cast<Op>(op), shape);
    double want = 0;
    for (size_t k = 0; k < v.size; ++k) want += p.coefficients[op][k] * v.values[k];
    EXPECT_DOUBLE_EQ(t.op_s[op], want) << op_name(static_cast<Op>(op));
    total += want;
  }
  EXPECT_DOUBLE_EQ(t.total_s, total);
  EXPECT_GT(t[Op::kMlp], 0.0);
  EXPECT_EQ(t[Op::kComm], 0.0);
}

TEST(CalibratedCostModel, ScalesEachGemmByItsRowFactor) {
  CalibrationProfile p = make_profile("Llama-100M-bench");
  const ModelSpec m = model("Llama-100M-bench");
  const CalibratedCostModel linear(p, m, {});
  p.row_scales[static_cast<size_t>(Op::kMlp)] = RowScale({{16, 1.0}, {64, 2.0}}, "test");
  p.row_scales[static_cast<size_t>(Op::kLmHead)] = RowScale({{1, 3.0}, {8, 1.0}}, "test");
  const CalibratedCostModel scaled(p, m, {});
  BatchShape prefill;  // 64 rows through the MLP, one sampled row through lm_head
  prefill.add_sequence(64, 0, true, true);
  const StepTime a = linear.predict(prefill);
  const StepTime b = scaled.predict(prefill);
  EXPECT_DOUBLE_EQ(b[Op::kMlp], 2.0 * a[Op::kMlp]);
  EXPECT_DOUBLE_EQ(b[Op::kLmHead], 3.0 * a[Op::kLmHead]);
  EXPECT_DOUBLE_EQ(b[Op::kQkv], a[Op::kQkv]);
  EXPECT_DOUBLE_EQ(b[Op::kAttentionPrefill], a[Op::kAttentionPrefill]);
  EXPECT_DOUBLE_EQ(b.total_s - a.total_s, a[Op::kMlp] + 2.0 * a[Op::kLmHead]);
}

TEST(CalibratedCostModel, MoreTokensCostMore) {
  const CalibratedCostModel cm(make_profile("Llama-100M-bench"), model("Llama-100M-bench"), {});
  BatchShape a, b;
  a.add_sequence(64, 0, true, true);
  b.add_sequence(256, 0, true, true);
  EXPECT_LT(cm.predict(a).total_s, cm.predict(b).total_s);
}

TEST(CalibratedCostModel, RefusesShapesFarBeyondTheProfileUnlessExtrapolating) {
  const CalibrationProfile p = make_profile("Llama-100M-bench");
  const ModelSpec m = model("Llama-100M-bench");
  BatchShape inside, too_many_tokens, too_long;
  inside.add_sequence(700, 0, true, true);  // within 1.5 x 512
  too_many_tokens.add_sequence(2048, 0, true, true);
  too_long.add_sequence(1, 4000, false, true);
  const CalibratedCostModel strict(p, m, {});
  EXPECT_NO_THROW(strict.predict(inside));
  EXPECT_THAT([&] { strict.predict(too_many_tokens); },
              ThrowsMessage<ConfigError>(HasSubstr("2048 tokens in a step (profiled up to 512)")));
  EXPECT_THAT([&] { strict.predict(too_long); },
              ThrowsMessage<ConfigError>(HasSubstr("cost_model.extrapolate=true")));
  EXPECT_FALSE(strict.predict(inside).extrapolated);

  const CalibratedCostModel loose(p, m, {}, {.extrapolate = true});
  EXPECT_GT(loose.predict(too_many_tokens).total_s, loose.predict(inside).total_s);
  // Each step says whether it lay beyond the profile; the model itself keeps no count.
  EXPECT_TRUE(loose.predict(too_many_tokens).extrapolated);
  EXPECT_TRUE(loose.predict(too_long).extrapolated);
  EXPECT_FALSE(loose.predict(inside).extrapolated);
}

TEST(CalibratedCostModel, AnotherModelNeedsTransfer) {
  const CalibrationProfile p = make_profile("Llama-100M-bench");
  EXPECT_THAT([&] { CalibratedCostModel(p, model("SmolLM2-135M"), {}); },
              ThrowsMessage<ConfigError>(HasSubstr("cost_model.transfer=true")));
  const CalibratedCostModel cm(p, model("SmolLM2-135M"), {}, {.transfer = true});
  EXPECT_TRUE(cm.transferred());
  BatchShape shape;
  shape.add_sequence(1, 100, false, true);
  EXPECT_GT(cm.predict(shape).total_s, 0.0);
}

TEST(CalibratedCostModel, OneDeviceAndDenseModelsOnly) {
  const CalibrationProfile p = make_profile("Llama-100M-bench");
  ParallelConfig tp2;
  tp2.tp = 2;
  EXPECT_THAT([&] { CalibratedCostModel(p, model("Llama-100M-bench"), tp2); },
              ThrowsMessage<ConfigError>(HasSubstr("covers one device")));
  EXPECT_THAT([&] { CalibratedCostModel(p, model("Mixtral-8x7B"), {}, {.transfer = true}); },
              ThrowsMessage<ConfigError>(HasSubstr("dense Llama-family")));
}

}  // namespace
}  // namespace servesim
