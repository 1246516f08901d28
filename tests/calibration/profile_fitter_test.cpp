#include "calibration/profile/profile_fitter.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>

#include "calibration_test_util.h"
#include "models/config_error.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;
using testing::known_coefficients;
using testing::synthetic_run;

TEST(ProfileFitter, RecoversKnownCoefficientsFromNoiselessData) {
  const FitResult r = fit_profile(synthetic_run(0.0), FitOptions{});
  const auto known = known_coefficients();
  for (size_t op = 0; op < kNumOps; ++op) {
    ASSERT_EQ(r.profile.coefficients[op].size(), known[op].size()) << op_name(static_cast<Op>(op));
    for (size_t k = 0; k < known[op].size(); ++k) {
      EXPECT_NEAR(r.profile.coefficients[op][k], known[op][k], 1e-6 * known[op][k])
          << op_name(static_cast<Op>(op)) << " feature " << k;
    }
  }
  EXPECT_LT(r.profile.fit.step.mape, 1e-6);
  EXPECT_NEAR(r.profile.fit.step.r2, 1.0, 1e-9);
  EXPECT_NEAR(r.profile.rates.gemm_flops_per_s, 22e9, 1e3);
  EXPECT_NEAR(r.profile.rates.weight_bytes_per_s, 11e9, 1e3);
  EXPECT_NEAR(r.profile.rates.kv_bytes_per_s, 5e9, 1e3);
  EXPECT_EQ(r.profile.rates.measured_gemm_flops_per_s, 25e9);
}

TEST(ProfileFitter, RecoversTheDominantCoefficientsThroughNoise) {
  const FitResult r = fit_profile(synthetic_run(0.05, 5), FitOptions{});
  const auto known = known_coefficients();
  auto coef = [&](Op op, size_t k) { return r.profile.coefficients[static_cast<size_t>(op)][k]; };
  auto want = [&](Op op, size_t k) { return known[static_cast<size_t>(op)][k]; };
  // The FLOP terms dominate the GEMMs and prefill attention, the KV term the decodes.
  for (Op op : {Op::kQkv, Op::kOProj, Op::kMlp})
    EXPECT_NEAR(coef(op, 0), want(op, 0), 0.1 * want(op, 0));
  EXPECT_NEAR(coef(Op::kAttentionDecode, 0), want(Op::kAttentionDecode, 0),
              0.1 * want(Op::kAttentionDecode, 0));
  // 5% uniform noise per op: the held-out step error stays well below it.
  EXPECT_LT(r.profile.fit.step.mape, 0.04);
  EXPECT_GT(r.profile.fit.step.r2, 0.99);
  for (const auto& c : r.profile.coefficients) {
    for (double v : c) EXPECT_GE(v, 0.0);
  }
}

TEST(ProfileFitter, LinearKernelsNeedNoRowScale) {
  // Noiseless linear data: any row scale the fit keeps is the identity.
  const FitResult r = fit_profile(synthetic_run(0.0), FitOptions{});
  for (const RowScale& s : r.profile.row_scales) {
    for (const RowFactor& f : s.points()) EXPECT_NEAR(f.factor, 1.0, 1e-6);
  }
}

// A blocked GEMM with a fixed cost that short chunks cannot amortise: 17 rows run at 1.6x
// their linear time, the penalty fading out by 64 rows, as the CPU engine measured.
double short_chunk_slowdown(Op op, double rows) {
  if (op != Op::kMlp && op != Op::kQkv && op != Op::kOProj) return 1.0;
  return rows > 16 && rows <= 64 ? 1.0 + 0.6 * (64 - rows) / 48 : 1.0;
}

TEST(ProfileFitter, RowScaleCapturesAGemmThatIsNotLinearInItsRows) {
  const FitResult r = fit_profile(synthetic_run(0.02, 3, 7, short_chunk_slowdown), FitOptions{});
  const CalibrationProfile& p = r.profile;
  const RowScale& mlp = p.row_scales[static_cast<size_t>(Op::kMlp)];
  ASSERT_FALSE(mlp.empty());
  // Priced with the fitted profile, a 24-token prefill's MLP is within 5% of the truth; the
  // linear part alone misses it by more than 20%.
  const ModelSpec spec = testing::tiny_model();
  const CostFeatures features(spec, DType::kFp32, DType::kFp32);
  BatchShape shape;
  shape.add_sequence(24, 0, true, true);
  const OpFeatureValues f = features.features(Op::kMlp, shape);
  const auto known = known_coefficients();
  double truth = 0, linear = 0;
  for (size_t k = 0; k < f.size; ++k) {
    truth += known[static_cast<size_t>(Op::kMlp)][k] * f.values[k];
    linear += p.coefficients[static_cast<size_t>(Op::kMlp)][k] * f.values[k];
  }
  truth *= short_chunk_slowdown(Op::kMlp, 24);
  EXPECT_NEAR(linear * mlp.at(24), truth, 0.05 * truth);
  EXPECT_GT(std::abs(linear - truth), 0.2 * truth);
  // Held out, the whole step is predicted about as well as the noise allows.
  EXPECT_LT(p.fit.step.mape, 0.03);
  EXPECT_LT(p.fit.ops[static_cast<size_t>(Op::kMlp)].mape, 0.04);
}

TEST(ProfileFitter, KeepsReferenceStepsOfThreeKindsWithTheirMedians) {
  const ProfileRun run = synthetic_run(0.0);
  const FitResult r = fit_profile(run, FitOptions{});
  const auto& refs = r.profile.reference_steps;
  ASSERT_EQ(refs.size(), 3u);
  const ProfileGridOptions g;
  // The widest decode batch at the longest context, a single decode, an eighth-size chunk.
  EXPECT_EQ(refs[0].seqs.size(), static_cast<size_t>(g.max_seqs));
  EXPECT_EQ(refs[0].seqs[0].context, g.max_context - 1);
  EXPECT_FALSE(refs[0].seqs[0].prefill);
  EXPECT_EQ(refs[1].seqs.size(), 1u);
  EXPECT_FALSE(refs[1].seqs[0].prefill);
  ASSERT_EQ(refs[2].seqs.size(), 1u);
  EXPECT_TRUE(refs[2].seqs[0].prefill);
  EXPECT_EQ(refs[2].seqs[0].new_tokens, g.max_tokens / 8);
  EXPECT_EQ(refs[2].seqs[0].context, 0);
  for (const ReferenceStep& ref : refs) {
    bool found = false;
    for (const ProfileSample& s : run.samples) {
      if (s.seqs == ref.seqs) {
        EXPECT_NEAR(ref.step_s, s.step_s, 1e-12 * s.step_s);  // noiseless: every repeat alike
        found = true;
      }
    }
    EXPECT_TRUE(found);
  }
}

TEST(ProfileFitter, RangeCoversTheGrid) {
  const FitResult r = fit_profile(synthetic_run(0.0), FitOptions{});
  const ProfileGridOptions g;
  EXPECT_EQ(r.profile.range.max_context, g.max_context);
  EXPECT_EQ(r.profile.range.max_seqs, g.max_seqs + 1);  // the mixed shape adds a prefill
  EXPECT_EQ(r.profile.range.max_tokens, g.max_seqs + g.max_tokens);
}

TEST(ProfileFitter, RefusesAnotherModelOrBackendThanAsked) {
  FitOptions o;
  o.expect_model = "Llama-3-8B";
  EXPECT_THAT([&] { fit_profile(synthetic_run(0.0), o); },
              ::testing::ThrowsMessage<ConfigError>(
                  HasSubstr("profiles Llama-tiny-calib, not Llama-3-8B")));
  o = FitOptions{};
  o.expect_backend = "cuda";
  EXPECT_THAT([&] { fit_profile(synthetic_run(0.0), o); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("--backend cuda")));
}

TEST(ProfileFitter, TooFewShapesSaysWhatToRerun) {
  ProfileRun run = synthetic_run(0.0, 1);
  run.samples.resize(5);
  EXPECT_THAT([&] { fit_profile(run, FitOptions{}); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("too few to fit")));
}

TEST(ProfileFitter, IllConditionedOpIsRefused) {
  // Only decodes at one context: the decode op's KV bytes and sequence count move together.
  ProfileRun run = synthetic_run(0.0, 1);
  std::vector<ProfileSample> kept;
  for (const ProfileSample& s : run.samples) {
    const bool decodes_at_32 =
        std::all_of(s.seqs.begin(), s.seqs.end(),
                    [](const ShapeSequence& q) { return !q.prefill && q.context == 32; });
    // Prefill-only shapes keep every other op's data.
    const bool one_prefill = s.seqs.size() == 1 && s.seqs.front().prefill;
    if (decodes_at_32 || one_prefill) kept.push_back(s);
  }
  run.samples = kept;
  EXPECT_THAT([&] { fit_profile(run, FitOptions{}); },
              ::testing::ThrowsMessage<ConfigError>(HasSubstr("op attention_decode")));
}

TEST(ProfileFitter, IncompleteRunIsFittedWithAWarning) {
  ProfileRun run = synthetic_run(0.0, 2);
  run.samples.pop_back();
  run.dropped_partial_lines = 1;
  const FitResult r = fit_profile(run, FitOptions{});
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_THAT(r.warnings[0], HasSubstr("interrupted"));
  EXPECT_THAT(r.warnings[1], HasSubstr("fewer repeats"));
}

}  // namespace
}  // namespace servesim
