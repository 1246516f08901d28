#include "calibration/profile/profile_fitter.h"

#include <Eigen/Dense>
#include <algorithm>
#include <cmath>
#include <map>

#include "calibration/profile/nnls.h"
#include "models/config_error.h"
#include "models/cost_features.h"
#include "models/model_spec.h"
#include "sim/metrics/percentile.h"

namespace servesim {
namespace {

constexpr double kOpMapeFloor = 0.05;  // fraction of the step below which an op is noise

// One grid point: its shape and the medians of its repeats.
struct ShapePoint {
  ProfileShape seqs;
  BatchShape shape;
  int64_t max_context = 0;
  double step_s = 0;
  OpSeconds op_s{};
};

std::vector<ShapePoint> reduce(const ProfileRun& run, int* incomplete) {
  std::map<int, std::vector<const ProfileSample*>> by_shape;
  for (const ProfileSample& s : run.samples) by_shape[s.shape].push_back(&s);
  size_t most = 0;
  for (const auto& [shape, samples] : by_shape) most = std::max(most, samples.size());
  *incomplete = 0;
  std::vector<ShapePoint> points;
  for (const auto& [shape, samples] : by_shape) {
    if (samples.size() < most) ++*incomplete;
    ShapePoint p;
    p.seqs = samples.front()->seqs;
    p.shape = to_batch_shape(p.seqs);
    for (const ShapeSequence& q : samples.front()->seqs) {
      p.max_context = std::max<int64_t>(p.max_context, q.context + q.new_tokens);
    }
    std::vector<double> v;
    for (const ProfileSample* s : samples) v.push_back(s->step_s);
    p.step_s = percentile(v, 50);
    double timed = 0;
    for (size_t op = 0; op < kNumOps; ++op) {
      v.clear();
      for (const ProfileSample* s : samples) v.push_back(s->op_s[op]);
      p.op_s[op] = percentile(v, 50);
      if (static_cast<Op>(op) != Op::kOverhead) timed += p.op_s[op];
    }
    // The overhead op carries the untimed rest of the step, so the ops sum to the step.
    p.op_s[static_cast<size_t>(Op::kOverhead)] = std::max(0.0, p.step_s - timed);
    points.push_back(p);
  }
  return points;
}

// Shapes of three kinds for calibrate validate's speed probe, each bound by something else:
// the widest decode batch at the longest context (KV reads), a single decode (weight
// streaming) and the one-prompt chunk nearest an eighth of the largest (GEMM FLOPs). Cheap
// ones, so probing takes a second or two where serving takes a minute.
std::vector<ReferenceStep> pick_reference_steps(const std::vector<ShapePoint>& points) {
  const ShapePoint* widest = nullptr;
  const ShapePoint* single = nullptr;
  const ShapePoint* chunk = nullptr;
  int64_t largest_chunk = 0;
  for (const ShapePoint& p : points) {
    if (p.shape.num_seqs == 1 && p.shape.num_prefill_seqs == 1) {
      largest_chunk = std::max(largest_chunk, p.shape.num_tokens);
    }
  }
  auto key = [](const ShapePoint& p) {
    return std::pair(p.shape.num_seqs, p.shape.decode_context_tokens);
  };
  for (const ShapePoint& p : points) {
    const BatchShape& s = p.shape;
    if (s.num_prefill_seqs == 0 && s.num_decode_seqs > 0) {
      if (widest == nullptr || key(p) > key(*widest)) widest = &p;
      if (single == nullptr || key(p) < key(*single)) single = &p;
    }
    if (s.num_seqs == 1 && s.num_prefill_seqs == 1) {
      auto distance = [&](const ShapePoint& q) {
        return std::pair(std::abs(8 * q.shape.num_tokens - largest_chunk),
                         q.shape.prefill_kv_tokens);
      };
      if (chunk == nullptr || distance(p) < distance(*chunk)) chunk = &p;
    }
  }
  std::vector<ReferenceStep> steps;
  for (const ShapePoint* p : {widest, single, chunk}) {
    if (p == nullptr || p->step_s <= 0) continue;
    const bool seen = std::any_of(steps.begin(), steps.end(),
                                  [&](const ReferenceStep& r) { return r.seqs == p->seqs; });
    if (!seen) steps.push_back({p->seqs, p->step_s});
  }
  return steps;
}

// Ratio of the largest to the smallest singular value of the columns `used` of `a`; 0 when
// there are none.
double condition_number(const Eigen::MatrixXd& a, const std::vector<Eigen::Index>& used) {
  if (used.empty()) return 0;
  Eigen::MatrixXd sub(a.rows(), static_cast<Eigen::Index>(used.size()));
  for (size_t k = 0; k < used.size(); ++k) sub.col(static_cast<Eigen::Index>(k)) = a.col(used[k]);
  const Eigen::JacobiSVD<Eigen::MatrixXd> svd(sub);
  const auto& sv = svd.singularValues();
  return sv(sv.size() - 1) > 0 ? sv(0) / sv(sv.size() - 1)
                               : std::numeric_limits<double>::infinity();
}

struct OpModel {
  std::vector<double> coefficients;  // seconds per feature unit
  RowScale row_scale;                // GEMMs: median measured / linear at each row count
};

double linear_op(const OpModel& m, const CostFeatures& features, Op op, const BatchShape& s) {
  const OpFeatureValues f = features.features(op, s);
  double t = 0;
  for (size_t k = 0; k < m.coefficients.size() && k < f.size; ++k)
    t += m.coefficients[k] * f.values[k];
  return t;
}

// The GEMM's row-efficiency table from the points `rows` of the fit: at each row count, the
// median of measured over linear — a median so that one disturbed shape cannot bend it.
RowScale fit_row_scale(const OpModel& m, const std::vector<ShapePoint>& points,
                       const std::vector<size_t>& rows, const CostFeatures& features, Op op) {
  std::map<double, std::vector<double>> ratios;
  for (size_t i : rows) {
    const ShapePoint& p = points[i];
    const double r = gemm_rows(op, p.shape);
    const double lin = linear_op(m, features, op, p.shape);
    const double y = p.op_s[static_cast<size_t>(op)];
    if (r > 0 && lin > 0 && y > 0) ratios[r].push_back(y / lin);
  }
  std::vector<RowFactor> factors;
  for (auto& [r, v] : ratios) factors.push_back({r, percentile(v, 50)});
  return RowScale(std::move(factors), std::string("calibrate fit: ") + std::string(op_name(op)));
}

// Fits every op on the points whose index is not in fold `skip` (-1: all points).
std::array<OpModel, kNumOps> fit_ops(const std::vector<ShapePoint>& points,
                                     const CostFeatures& features, int folds, int skip,
                                     double max_condition) {
  std::array<OpModel, kNumOps> models;
  std::vector<size_t> rows;
  for (size_t i = 0; i < points.size(); ++i) {
    if (skip < 0 || static_cast<int>(i % static_cast<size_t>(folds)) != skip) rows.push_back(i);
  }
  for (size_t op = 0; op < kNumOps; ++op) {
    const size_t nf = op_feature_names(static_cast<Op>(op)).size();
    if (nf == 0) continue;
    Eigen::MatrixXd a(static_cast<Eigen::Index>(rows.size()), static_cast<Eigen::Index>(nf));
    Eigen::VectorXd b(static_cast<Eigen::Index>(rows.size()));
    for (size_t r = 0; r < rows.size(); ++r) {
      const ShapePoint& p = points[rows[r]];
      const OpFeatureValues f = features.features(static_cast<Op>(op), p.shape);
      const double w = 1.0 / p.step_s;
      for (size_t k = 0; k < nf; ++k) {
        a(static_cast<Eigen::Index>(r), static_cast<Eigen::Index>(k)) = f.values[k] * w;
      }
      b(static_cast<Eigen::Index>(r)) = p.op_s[op] * w;
    }
    // Scale columns to unit norm so FLOPs (1e9) and counts (1) are comparable.
    Eigen::VectorXd scale = Eigen::VectorXd::Ones(static_cast<Eigen::Index>(nf));
    std::vector<Eigen::Index> used;
    for (Eigen::Index k = 0; k < a.cols(); ++k) {
      const double norm = a.col(k).norm();
      if (norm > 0) {
        scale(k) = norm;
        a.col(k) /= norm;
        used.push_back(k);
      }
    }
    // A refinement (a GEMM's small-batch or GEMV term) that the grid cannot separate from the
    // base features is left out (coefficient 0) rather than fitted to noise; base features that
    // cannot be separated make the fit refuse.
    double cond = condition_number(a, used);
    for (size_t k = nf; k-- > 0 && cond > max_condition;) {
      const auto at = std::find(used.begin(), used.end(), static_cast<Eigen::Index>(k));
      if (at == used.end() || !op_feature_is_refinement(static_cast<Op>(op), k)) continue;
      used.erase(at);
      a.col(static_cast<Eigen::Index>(k)).setZero();
      cond = condition_number(a, used);
    }
    if (cond > max_condition) {
      throw ConfigError("calibrate fit: op " + std::string(op_name(static_cast<Op>(op))) +
                        ": its features do not vary independently across the profiled shapes "
                        "(condition number " +
                        std::to_string(cond) +
                        "); re-run `servesim calibrate profile` without --quick or with larger "
                        "--max-tokens/--max-seqs/--max-context");
    }
    const Eigen::VectorXd x = solve_nnls(a, b);
    models[op].coefficients.resize(nf);
    for (size_t k = 0; k < nf; ++k) {
      models[op].coefficients[k] =
          x(static_cast<Eigen::Index>(k)) / scale(static_cast<Eigen::Index>(k));
    }
    if (is_gemm_op(static_cast<Op>(op))) {
      models[op].row_scale = fit_row_scale(models[op], points, rows, features, static_cast<Op>(op));
    }
  }
  return models;
}

OpFitQuality quality(const std::vector<double>& y, const std::vector<double>& pred,
                     const std::vector<bool>& in_mape) {
  double mean = 0;
  for (double v : y) mean += v;
  mean /= static_cast<double>(y.size());
  double ss_res = 0, ss_tot = 0, ape = 0;
  int n = 0;
  for (size_t i = 0; i < y.size(); ++i) {
    ss_res += (pred[i] - y[i]) * (pred[i] - y[i]);
    ss_tot += (y[i] - mean) * (y[i] - mean);
    if (in_mape[i] && y[i] > 0) {
      ape += std::abs(pred[i] - y[i]) / y[i];
      ++n;
    }
  }
  return {n > 0 ? ape / n : 0.0, ss_tot > 0 ? 1.0 - ss_res / ss_tot : 0.0};
}

std::string env_string(const nlohmann::json& env, const char* key, const std::string& fallback) {
  return env.contains(key) && env[key].is_string() ? env[key].get<std::string>() : fallback;
}

}  // namespace

FitResult fit_profile(const ProfileRun& run, const FitOptions& o) {
  if (o.folds < 2) throw ConfigError("calibrate fit: --folds must be >= 2");
  const nlohmann::json& env = run.environment;
  FitResult result;
  CalibrationProfile& p = result.profile;
  p.model = env_string(env, "model", "");
  p.backend = env_string(env, "backend", "");
  p.device = env_string(env, "device", "unknown");
  p.threads = env.value("threads", 1);
  p.weight_dtype = parse_dtype(env_string(env, "weight_dtype", "fp32"), "environment.weight_dtype");
  p.kv_dtype = parse_dtype(env_string(env, "kv_dtype", "fp32"), "environment.kv_dtype");
  p.environment = env;
  const std::string rerun_hint = "; re-run `servesim calibrate profile --model " +
                                 (o.expect_model.empty() ? p.model : o.expect_model) + "`";
  if (!o.expect_model.empty() && o.expect_model != p.model) {
    throw ConfigError("calibrate fit: the run directory profiles " + p.model + ", not " +
                      o.expect_model + rerun_hint);
  }
  if (!o.expect_backend.empty() && o.expect_backend != p.backend) {
    throw ConfigError("calibrate fit: the run directory profiles the " + p.backend +
                      " backend, not " + o.expect_backend + rerun_hint + " --backend " +
                      o.expect_backend);
  }
  if (!env.contains("model_spec")) {
    throw ConfigError("calibrate fit: environment.json lacks model_spec" + rerun_hint);
  }
  const ModelSpec spec = ModelSpec::from_json(env["model_spec"], "environment.json: model_spec");
  const CostFeatures features(spec, p.weight_dtype, p.kv_dtype);

  int incomplete = 0;
  const std::vector<ShapePoint> points = reduce(run, &incomplete);
  if (run.dropped_partial_lines > 0) {
    result.warnings.push_back("dropped an interrupted last sample line");
  }
  if (incomplete > 0) {
    result.warnings.push_back(std::to_string(incomplete) +
                              " shapes have fewer repeats than the others (interrupted run?)");
  }
  size_t most_features = 0;
  for (size_t op = 0; op < kNumOps; ++op) {
    most_features = std::max(most_features, op_feature_names(static_cast<Op>(op)).size());
  }
  const size_t needed = std::max<size_t>(2 * static_cast<size_t>(o.folds), 4 * most_features);
  if (points.size() < needed) {
    throw ConfigError("calibrate fit: " + std::to_string(points.size()) +
                      " profiled shapes are too few to fit and cross-validate (need " +
                      std::to_string(needed) + ")" + rerun_hint +
                      " and let it finish (or widen its grid)");
  }

  // Held-out predictions, per op with and without its row scale.
  const size_t n = points.size();
  std::array<std::vector<double>, kNumOps> linear_pred, scaled_pred;
  for (auto& v : linear_pred) v.assign(n, 0.0);
  for (auto& v : scaled_pred) v.assign(n, 0.0);
  for (int fold = 0; fold < o.folds; ++fold) {
    const auto models = fit_ops(points, features, o.folds, fold, o.max_condition);
    for (size_t i = static_cast<size_t>(fold); i < n; i += static_cast<size_t>(o.folds)) {
      for (size_t op = 0; op < kNumOps; ++op) {
        const Op which = static_cast<Op>(op);
        const double lin = linear_op(models[op], features, which, points[i].shape);
        linear_pred[op][i] = lin;
        scaled_pred[op][i] = lin * models[op].row_scale.at(gemm_rows(which, points[i].shape));
      }
    }
  }
  // A GEMM keeps its row scale when that predicts the held-out shapes better (error summed
  // relative to each step): on a kernel whose time is linear in its rows the table only adds
  // noise, and cross-validation says so.
  std::array<bool, kNumOps> scaled{};
  for (size_t op = 0; op < kNumOps; ++op) {
    if (!is_gemm_op(static_cast<Op>(op))) continue;
    double linear_err = 0, scaled_err = 0;
    for (size_t i = 0; i < n; ++i) {
      const double y = points[i].op_s[op];
      linear_err += std::abs(linear_pred[op][i] - y) / points[i].step_s;
      scaled_err += std::abs(scaled_pred[op][i] - y) / points[i].step_s;
    }
    scaled[op] = scaled_err < linear_err;
  }
  std::vector<double> step_y(n), step_pred(n, 0.0);
  for (size_t i = 0; i < n; ++i) step_y[i] = points[i].step_s;
  p.fit.samples = static_cast<int>(run.samples.size());
  p.fit.shapes = static_cast<int>(n);
  p.fit.folds = o.folds;
  for (size_t op = 0; op < kNumOps; ++op) {
    if (op_feature_names(static_cast<Op>(op)).empty()) continue;
    const std::vector<double>& pred = scaled[op] ? scaled_pred[op] : linear_pred[op];
    std::vector<double> y(n);
    std::vector<bool> in_mape(n);
    for (size_t i = 0; i < n; ++i) {
      y[i] = points[i].op_s[op];
      in_mape[i] = y[i] >= kOpMapeFloor * points[i].step_s;
      step_pred[i] += pred[i];
    }
    p.fit.ops[op] = quality(y, pred, in_mape);
  }
  p.fit.step = quality(step_y, step_pred, std::vector<bool>(n, true));

  const auto models = fit_ops(points, features, o.folds, -1, o.max_condition);
  for (size_t op = 0; op < kNumOps; ++op) {
    p.coefficients[op] = models[op].coefficients;
    if (scaled[op]) p.row_scales[op] = models[op].row_scale;
  }
  p.reference_steps = pick_reference_steps(points);
  for (const ShapePoint& pt : points) {
    p.range.max_tokens = std::max(p.range.max_tokens, pt.shape.num_tokens);
    p.range.max_seqs = std::max<int64_t>(p.range.max_seqs, pt.shape.num_seqs);
    p.range.max_context = std::max(p.range.max_context, pt.max_context);
  }
  auto inverse = [](const std::vector<double>& c, size_t k) {
    return k < c.size() && c[k] > 0 ? 1.0 / c[k] : 0.0;
  };
  const auto& mlp = p.coefficients[static_cast<size_t>(Op::kMlp)];
  p.rates.gemm_flops_per_s = inverse(mlp, 0);
  p.rates.weight_bytes_per_s = inverse(mlp, 1);
  p.rates.kv_bytes_per_s = inverse(p.coefficients[static_cast<size_t>(Op::kAttentionDecode)], 0);
  if (env.contains("measured") && env["measured"].is_object()) {
    p.rates.measured_gemm_flops_per_s = env["measured"].value("gemm_flops", 0.0);
    p.rates.measured_bytes_per_s = env["measured"].value("read_bandwidth_Bps", 0.0);
  }
  return result;
}

}  // namespace servesim
