// The CPU forward pass against a naive fp64 implementation of the same Llama model: dense
// attention, no paging, no batching, every intermediate in double.
#include <gtest/gtest.h>

#include <cmath>
#include <numeric>

#include "engine/runtime/model_runner.h"
#include "engine/runtime/weights.h"
#include "tests/engine/tiny_model.h"

namespace servesim {
namespace {

using Vec = std::vector<double>;

// y = W x for W (out, in) row-major.
Vec matvec(const std::vector<float>& w, const Vec& x, size_t out) {
  Vec y(out, 0.0);
  for (size_t o = 0; o < out; ++o) {
    for (size_t i = 0; i < x.size(); ++i) y[o] += double(w[o * x.size() + i]) * x[i];
  }
  return y;
}

Vec rms(const Vec& x, const std::vector<float>& w, double eps) {
  double ss = 0;
  for (double v : x) ss += v * v;
  const double s = 1.0 / std::sqrt(ss / double(x.size()) + eps);
  Vec y(x.size());
  for (size_t i = 0; i < x.size(); ++i) y[i] = x[i] * s * w[i];
  return y;
}

void rope(Vec& v, size_t heads, size_t hd, int pos, double theta) {
  for (size_t h = 0; h < heads; ++h) {
    for (size_t i = 0; i < hd / 2; ++i) {
      const double ang = pos * std::pow(theta, -2.0 * double(i) / double(hd));
      const double a = v[h * hd + i], b = v[h * hd + i + hd / 2];
      v[h * hd + i] = a * std::cos(ang) - b * std::sin(ang);
      v[h * hd + i + hd / 2] = b * std::cos(ang) + a * std::sin(ang);
    }
  }
}

// Logits after the last token of `tokens`.
Vec reference_logits(const Weights& w, const std::vector<int32_t>& tokens) {
  const ModelSpec& m = w.spec;
  const size_t H = size_t(m.hidden_size), nh = size_t(m.num_heads), kvh = size_t(m.num_kv_heads),
               hd = size_t(m.head_dim), T = tokens.size();
  std::vector<Vec> x(T, Vec(H));
  for (size_t t = 0; t < T; ++t) {
    for (size_t i = 0; i < H; ++i) x[t][i] = w.embedding[size_t(tokens[t]) * H + i];
  }
  for (const LayerWeights& l : w.layers) {
    std::vector<Vec> q(T), k(T), v(T);
    for (size_t t = 0; t < T; ++t) {
      const Vec h = rms(x[t], l.attn_norm, w.rms_norm_eps);
      q[t] = matvec(l.wq, h, nh * hd);
      k[t] = matvec(l.wk, h, kvh * hd);
      v[t] = matvec(l.wv, h, kvh * hd);
      rope(q[t], nh, hd, int(t), w.rope_theta);
      rope(k[t], kvh, hd, int(t), w.rope_theta);
    }
    for (size_t t = 0; t < T; ++t) {
      Vec attn(nh * hd, 0.0);
      for (size_t h = 0; h < nh; ++h) {
        const size_t g = h / (nh / kvh);
        Vec s(t + 1);
        double mx = -1e300, sum = 0;
        for (size_t j = 0; j <= t; ++j) {
          s[j] = 0;
          for (size_t e = 0; e < hd; ++e) s[j] += q[t][h * hd + e] * k[j][g * hd + e];
          s[j] /= std::sqrt(double(hd));
          mx = std::max(mx, s[j]);
        }
        for (double& e : s) sum += (e = std::exp(e - mx));
        for (size_t j = 0; j <= t; ++j) {
          for (size_t e = 0; e < hd; ++e) attn[h * hd + e] += s[j] / sum * v[j][g * hd + e];
        }
      }
      const Vec o = matvec(l.wo, attn, H);
      for (size_t i = 0; i < H; ++i) x[t][i] += o[i];
      const Vec h2 = rms(x[t], l.ffn_norm, w.rms_norm_eps);
      const Vec gate = matvec(l.w_gate, h2, size_t(m.intermediate_size));
      const Vec up = matvec(l.w_up, h2, size_t(m.intermediate_size));
      Vec act(gate.size());
      for (size_t i = 0; i < act.size(); ++i) act[i] = gate[i] / (1 + std::exp(-gate[i])) * up[i];
      const Vec d = matvec(l.w_down, act, H);
      for (size_t i = 0; i < H; ++i) x[t][i] += d[i];
    }
  }
  return matvec(w.output_matrix(), rms(x[T - 1], w.final_norm, w.rms_norm_eps),
                size_t(m.vocab_size));
}

double relative_error(std::span<const float> got, const Vec& ref) {
  double worst = 0, mag = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    worst = std::max(worst, std::abs(double(got[i]) - ref[i]));
    mag = std::max(mag, std::abs(ref[i]));
  }
  return worst / mag;
}

TEST(ReferenceForward, PrefillThenDecodesMatchFp64) {
  const Weights w = Weights::random(testing::tiny_model_spec(), 7);
  ModelRunner runner(w, ModelRunnerOptions{64, 4, 2, false});
  std::vector<int32_t> tokens = testing::test_prompt(11);
  std::vector<int32_t> table(16);
  std::iota(table.rbegin(), table.rend(), 3);  // descending, non-contiguous use of the cache

  SchedulerOutput out;
  out.sequences.push_back(ScheduledSequence{1, 11, 0, 11, true, true, 0, 0, table});
  for (int step = 0; step < 6; ++step) {
    const std::span<const int32_t> toks[] = {tokens};
    const RunnerOutput& res = runner.execute(out, toks);
    ASSERT_EQ(res.num_samples, 1);
    EXPECT_LT(relative_error(res.row(0, 64), reference_logits(w, tokens)), 2e-5) << "step " << step;
    // Decode the next token: greedy on the reference would do, any token works.
    tokens.push_back((step * 5 + 1) % 64);
    ScheduledSequence& s = out.sequences[0];
    s.num_computed_tokens += s.num_new_tokens;
    s.num_new_tokens = 1;
    s.is_prefill = false;
  }
}

TEST(Weights, RandomActivationsStayFiniteThroughManyLayers) {
  const Weights w = Weights::random(testing::tiny_model_spec(24), 3);
  ModelRunner runner(w, ModelRunnerOptions{32, 4, 1, false});
  std::vector<int32_t> table(8);
  std::iota(table.begin(), table.end(), 1);
  const std::vector<int32_t> tokens = testing::test_prompt(20);
  SchedulerOutput out;
  out.sequences.push_back(ScheduledSequence{1, 20, 0, 20, true, true, 0, 0, table});
  const std::span<const int32_t> toks[] = {tokens};
  const RunnerOutput& res = runner.execute(out, toks);
  double ss = 0;
  for (float v : res.row(0, 64)) {
    ASSERT_TRUE(std::isfinite(v));
    ss += double(v) * v;
  }
  const double rms_logit = std::sqrt(ss / 64);
  EXPECT_GT(rms_logit, 0.1);
  EXPECT_LT(rms_logit, 100.0);
}

TEST(Weights, RandomIsSeededAndCountsParameters) {
  const ModelSpec spec = testing::tiny_model_spec();
  const Weights a = Weights::random(spec, 1), b = Weights::random(spec, 1),
                c = Weights::random(spec, 2);
  EXPECT_EQ(a.layers[1].wq, b.layers[1].wq);
  EXPECT_NE(a.layers[1].wq, c.layers[1].wq);
  EXPECT_EQ(a.num_params(), spec.total_params());
}

}  // namespace
}  // namespace servesim
