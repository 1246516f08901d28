#include "calibration/serving/serving_case_builder.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <limits>

#include "calibration/measured/published_serving_rows.h"
#include "calibration_test_util.h"
#include "models/config_error.h"
#include "sim/scenario/scenario.h"

namespace servesim {
namespace {

const std::string kRows =
    std::string(SERVESIM_SOURCE_DIR) + "/tests/calibration/data/published/qwen3-32b-h100-rows.csv";

SimulationConfig qwen_on_h100() {
  return testing::scenario_of({{"model", "Qwen3-32B"},
                               {"gpu", "H100"},
                               {"parallel", {{"tensor_parallel_size", 2}}},
                               {"engine", {{"max_model_len", 8192}}}});
}

std::string write_file(const std::string& dir, const std::string& name, const std::string& text) {
  const std::string path = dir + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(PublishedServingRows, ReadsEachRowAsAClosedLoopRun) {
  ASSERT_TRUE(is_published_serving_rows(kRows));
  const std::vector<MeasuredRun> runs = read_published_serving_rows(kRows);
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[1].source, kRows + ":3");
  EXPECT_EQ(runs[1].format, "published");
  EXPECT_EQ(runs[1].model, "Qwen/Qwen3-32B");
  EXPECT_EQ(runs[1].gpu, "h100_sxm");
  EXPECT_EQ(runs[1].engine_version, "0.12.0");
  EXPECT_EQ(runs[1].tensor_parallel_size, 4);
  EXPECT_EQ(runs[1].pipeline_parallel_size, 1);
  EXPECT_EQ(*runs[2].load.max_concurrency, 16);
  EXPECT_EQ(runs[2].prompt_tokens_per_request, 1024);
  EXPECT_EQ(runs[2].output_tokens_per_request, 128);
  EXPECT_NEAR(runs[0].summary.ttft.mean_s, 0.1542481599, 1e-12);
  EXPECT_NEAR(runs[0].summary.tpot.mean_s, 0.0180370482875, 1e-12);
  EXPECT_TRUE(std::isnan(runs[0].summary.e2e.mean_s));
  EXPECT_TRUE(runs[0].requests.empty());
}

TEST(PublishedServingRows, BadRowsNameTheLineAndColumn) {
  const std::string dir = testing::fresh_dir("published_rows");
  const std::string header =
      "engine,engine_version,model,gpu,precision,mode,isl,osl,concurrency,tp,pp,ttft_ms,tpot_ms\n";
  const std::string bad_tp = write_file(
      dir, "tp.csv", header + "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,agg,1024,128,8,two,1,154,18\n");
  EXPECT_EQ(error_of([&] { read_published_serving_rows(bad_tp); }),
            bad_tp + ":2: tp: expected a positive whole number, got 'two'");
  const std::string disagg = write_file(
      dir, "d.csv", header + "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,disagg,1024,128,8,2,1,154,18\n");
  EXPECT_NE(error_of([&] { read_published_serving_rows(disagg); }).find(":2: mode: expected"),
            std::string::npos);
  const std::string negative = write_file(
      dir, "n.csv", header + "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,agg,1024,128,8,2,1,-1,18\n");
  EXPECT_EQ(error_of([&] { read_published_serving_rows(negative); }),
            negative + ":2: ttft_ms: expected a positive number, got '-1'");
  const std::string no_column = write_file(dir, "c.csv", "model,gpu,isl\nq,h,1\n");
  EXPECT_FALSE(is_published_serving_rows(no_column));
  EXPECT_NE(error_of([&] { read_published_serving_rows(no_column); }).find("missing column 'osl'"),
            std::string::npos);
  const std::string empty = write_file(dir, "e.csv", header);
  EXPECT_EQ(error_of([&] { read_published_serving_rows(empty); }),
            empty + ": no rows after the header");
  std::filesystem::remove_all(dir);
}

// The shared set's 4000/1000 rows say "fp8": their runs served fp8 weights, half the bytes a
// decode step streams and fp8 GEMMs, so simulating them in bf16 over-predicts TPOT and, on one
// H100, leaves too little KV room (docs/validation.md).
TEST(PublishedServingRows, APrecisionIsWhatTheWeightsWereServedIn) {
  const std::string dir = testing::fresh_dir("published_precision");
  const std::string header =
      "engine,engine_version,model,gpu,precision,mode,isl,osl,concurrency,tp,pp,ttft_ms,tpot_ms\n";
  const std::string rows = write_file(
      dir, "p.csv",
      header + "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,fp8,agg,4000,1000,48,2,1,184.6,11.6\n" +
          "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,agg,1024,128,8,2,1,154,18\n");
  const std::vector<MeasuredRun> runs = read_published_serving_rows(rows);
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[0].weight_dtype, DType::kFp8);
  EXPECT_FALSE(runs[1].weight_dtype.has_value());

  const ServingFitCase fp8 = make_serving_case(runs[0], qwen_on_h100(), Catalog());
  EXPECT_EQ(fp8.config.engine.dtype, DType::kFp8);
  EXPECT_FALSE(make_serving_case(runs[1], qwen_on_h100(), Catalog()).config.engine.dtype);

  const std::string unknown = write_file(
      dir, "u.csv", header + "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,nvfp4,agg,1024,128,8,2,1,1,1\n");
  EXPECT_EQ(error_of([&] { read_published_serving_rows(unknown); }),
            unknown +
                ":2: precision: expected the weights' precision (bf16, fp16, fp8, int8, int4, "
                "mxfp4) or empty for the model's own, got 'nvfp4'");
  std::filesystem::remove_all(dir);
}

TEST(ServingCaseBuilder, APublishedRowBecomesItsClosedLoopOnTheRowsTp) {
  const MeasuredRun run = read_published_serving_rows(kRows)[1];
  const ServingFitCase c = make_serving_case(run, qwen_on_h100(), Catalog());
  EXPECT_EQ(c.name, run.source);
  EXPECT_EQ(c.config.parallel.tp, 4);
  const WorkloadSpec& w = c.config.workload;
  EXPECT_EQ(w.kind, WorkloadKind::kClosedLoop);
  EXPECT_EQ(w.clients, 8);
  EXPECT_EQ(w.ramp_up_s, 0);
  EXPECT_EQ(w.prompt_tokens.mean(), 1024);
  EXPECT_EQ(w.output_tokens.mean(), 128);
  EXPECT_EQ(w.num_requests, 200u);  // max(8 x 8, 200): the row does not say
  EXPECT_EQ(c.config.metrics.warmup_requests, 16u);
  EXPECT_EQ(c.measured.ttft.mean_s, run.summary.ttft.mean_s);
  EXPECT_EQ(c.config.engine.vllm_version, (VllmVersion{0, 12}));  // the row's, not the default

  MeasuredRun ancient = run;
  ancient.engine_version = "0.1.2";
  EXPECT_NE(error_of([&] {
              make_serving_case(ancient, qwen_on_h100(), Catalog());
            }).find(run.source + ": engine_version"),
            std::string::npos);
}

// A benchmark that reused a small dataset (aiperf's --num-dataset-entries) is the base
// scenario's to say; every published row then draws its prompts from as many.
TEST(ServingCaseBuilder, APublishedRowKeepsTheBaseScenariosDatasetOfPrompts) {
  const MeasuredRun run = read_published_serving_rows(kRows)[1];
  EXPECT_EQ(make_serving_case(run, qwen_on_h100(), Catalog()).config.workload.distinct_prompts, 0);
  SimulationConfig base = qwen_on_h100();
  base.workload.distinct_prompts = 100;
  const ServingFitCase c = make_serving_case(run, base, Catalog());
  EXPECT_EQ(c.config.workload.distinct_prompts, 100);
  EXPECT_EQ(c.config.workload.clients, 8);  // the row's own load all the same
}

TEST(ServingCaseBuilder, APublishedRowIsIssuedByItsBenchmarkProtocol) {
  // InferenceX's protocol: 10 x clients requests, none left out, lengths in [0.8 L, L].
  const MeasuredRun run = read_published_serving_rows(kRows, BenchmarkProtocol::inferencex())[1];
  EXPECT_EQ(run.protocol.name, "inferencex");
  const ServingFitCase c = make_serving_case(run, qwen_on_h100(), Catalog());
  const WorkloadSpec& w = c.config.workload;
  EXPECT_EQ(w.kind, WorkloadKind::kClosedLoop);
  EXPECT_EQ(w.clients, 8);
  EXPECT_EQ(w.num_requests, 80u);
  EXPECT_EQ(c.config.metrics.warmup_requests, 0u);
  EXPECT_DOUBLE_EQ(w.prompt_tokens.mean(), (819 + 1024) / 2.0);
  EXPECT_DOUBLE_EQ(w.output_tokens.mean(), (102 + 128) / 2.0);
  Rng rng(7);
  int least = 1 << 30, most = 0;
  for (int i = 0; i < 2000; ++i) {
    const int n = w.prompt_tokens.sample(rng);
    least = std::min(least, n);
    most = std::max(most, n);
  }
  EXPECT_EQ(least, 819);
  EXPECT_EQ(most, 1024);
  EXPECT_NE(
      error_of([] {
        BenchmarkProtocol::named("aiperf", "--published-protocol");
      }).find("--published-protocol: expected steady, inferencex, aiconfigurator or inferencemax"),
      std::string::npos);
  // Neither protocol sizes the engine: the base scenario's limits stand (0: vLLM's defaults).
  EXPECT_EQ(c.config.engine.max_num_batched_tokens, 0);
  EXPECT_EQ(c.config.engine.max_num_seqs, 0);
}

TEST(ServingCaseBuilder, AiconfiguratorsProtocolRunsTheRowOnTheLimitsItsGeneratorWrites) {
  // aiperf's requests (20 x clients, exact lengths, all in the means) on --max-num-seqs B,
  // --max-num-batched-tokens B + ISL + 1500 and --max-model-len ISL + OSL + 1500, B = clients.
  const MeasuredRun run =
      read_published_serving_rows(kRows, BenchmarkProtocol::aiconfigurator())[1];
  const ServingFitCase c = make_serving_case(run, qwen_on_h100(), Catalog());
  const WorkloadSpec& w = c.config.workload;
  EXPECT_EQ(w.clients, 8);
  EXPECT_EQ(w.num_requests, 160u);
  EXPECT_EQ(c.config.metrics.warmup_requests, 0u);
  EXPECT_EQ(w.prompt_tokens.mean(), 1024);
  EXPECT_EQ(w.output_tokens.mean(), 128);
  EXPECT_EQ(c.config.engine.max_num_seqs, 8);
  EXPECT_EQ(c.config.engine.max_num_batched_tokens, 8 + 1024 + 1500);
  EXPECT_EQ(c.config.engine.max_model_len, 1024 + 128 + 1500);
  EXPECT_EQ(BenchmarkProtocol::named("aiconfigurator", "--published-protocol").name,
            "aiconfigurator");

  // Lengths as large as a row may state do not overflow the sums: they cap at INT_MAX.
  MeasuredRun huge = run;
  huge.prompt_tokens_per_request = std::numeric_limits<int>::max();
  huge.output_tokens_per_request = std::numeric_limits<int>::max();
  const ServingFitCase h = make_serving_case(huge, qwen_on_h100(), Catalog());
  EXPECT_EQ(h.config.engine.max_num_batched_tokens, std::numeric_limits<int>::max());
  EXPECT_EQ(h.config.engine.max_model_len, std::numeric_limits<int>::max());
}

TEST(ServingCaseBuilder, InferenceMaxsProtocolRunsTheRowOnTheVllmItsRecipeLaunched) {
  // InferenceX's client (10 x clients requests, lengths in [0.8 L, L]) on --kv-cache-dtype fp8
  // --async-scheduling --no-enable-prefix-caching --max-num-batched-tokens 8192
  // --max-num-seqs clients, --max-model-len by its rule, vLLM 0.10 unless the row names one.
  const MeasuredRun run = read_published_serving_rows(kRows, BenchmarkProtocol::inferencemax())[1];
  const ServingFitCase c = make_serving_case(run, qwen_on_h100(), Catalog());
  const EngineConfig& e = c.config.engine;
  EXPECT_EQ(c.config.workload.clients, 8);
  EXPECT_EQ(c.config.workload.num_requests, 80u);
  EXPECT_EQ(c.config.metrics.warmup_requests, 0u);
  EXPECT_EQ(e.max_num_seqs, 8);
  EXPECT_EQ(e.max_num_batched_tokens, 8192);
  EXPECT_EQ(e.max_model_len, 10240);  // 1024 in, 128 out: neither 1k/1k nor an 8k length
  EXPECT_EQ(e.kv_cache_dtype, DType::kFp8);
  EXPECT_TRUE(e.async_scheduling);
  EXPECT_FALSE(e.enable_prefix_caching);
  EXPECT_EQ(e.vllm_version.to_string(), "0.12");  // the row's own
  EXPECT_FALSE(e.cudagraph_mode.has_value());     // the release's default graphs
  EXPECT_EQ(BenchmarkProtocol::named("inferencemax", "--published-protocol").name, "inferencemax");

  // Its B200 script admits 512 sequences and graphs whole decode batches only.
  SimulationConfig on_b200 = qwen_on_h100();
  on_b200.gpu = Catalog().resolve_gpu("B200");
  MeasuredRun b200_run = run;
  b200_run.gpu = "B200";
  const EngineConfig& b200 = make_serving_case(b200_run, on_b200, Catalog()).config.engine;
  EXPECT_EQ(b200.max_num_seqs, 512);
  EXPECT_EQ(b200.cudagraph_mode, CudaGraphMode::kFullDecodeOnly);

  MeasuredRun square = run;
  square.output_tokens_per_request = 1024;
  square.engine_version.clear();
  const ServingFitCase sq = make_serving_case(square, qwen_on_h100(), Catalog());
  EXPECT_EQ(sq.config.engine.max_model_len, 1024 + 1024 + 20);
  EXPECT_EQ(sq.config.engine.vllm_version.to_string(), "0.10");
  MeasuredRun long_answer = run;
  long_answer.output_tokens_per_request = 8192;
  EXPECT_EQ(make_serving_case(long_answer, qwen_on_h100(), Catalog()).config.engine.max_model_len,
            1024 + 8192 + 200);
}

TEST(ServingCaseBuilder, AnAggregateRunIssuesItsOwnCountAtItsRate) {
  MeasuredRun run;
  run.source = "bench.json";
  run.model = "Qwen/Qwen3-32B";
  run.load.request_rate_per_s = 4;
  run.load.burstiness = 4;  // gamma shape 4: cv 1/2
  run.summary.completed = 100;
  run.summary.input_tokens = 51200;
  run.summary.output_tokens = 12800;
  run.summary.tpot.mean_s = 0.02;
  const ServingFitCase c = make_serving_case(run, qwen_on_h100(), Catalog());
  const WorkloadSpec& w = c.config.workload;
  EXPECT_EQ(w.kind, WorkloadKind::kOpenLoop);
  EXPECT_EQ(w.num_requests, 100u);
  EXPECT_EQ(w.prompt_tokens.mean(), 512);
  EXPECT_EQ(w.output_tokens.mean(), 128);
  EXPECT_EQ(c.config.metrics.warmup_requests, 0u);
  EXPECT_EQ(c.config.parallel.tp, 2);  // the scenario's: the run does not say

  run.load.request_rate_per_s = MeasuredLoad::kUnlimited;  // vllm bench's default: all at once
  const ServingFitCase burst = make_serving_case(run, qwen_on_h100(), Catalog());
  EXPECT_EQ(burst.config.workload.kind, WorkloadKind::kClosedLoop);
  EXPECT_EQ(burst.config.workload.clients, 100);
}

TEST(ServingCaseBuilder, RefusesARunOfAnotherModelOrGpuOrWithoutLengths) {
  MeasuredRun run = read_published_serving_rows(kRows)[0];
  run.model = "meta-llama/Llama-3.1-8B-Instruct";
  EXPECT_EQ(error_of([&] { make_serving_case(run, qwen_on_h100(), Catalog()); }),
            run.source +
                ": the run served model 'meta-llama/Llama-3.1-8B-Instruct', the scenario deploys "
                "'Qwen3-32B'; pass the run's model (--model or the scenario's \"model\")");
  run = read_published_serving_rows(kRows)[0];
  run.gpu = "a100_sxm";
  EXPECT_NE(error_of([&] {
              make_serving_case(run, qwen_on_h100(), Catalog());
            }).find("measured on GPU 'a100_sxm', the scenario deploys 'H100-SXM'"),
            std::string::npos);
  run = read_published_serving_rows(kRows)[0];
  run.prompt_tokens_per_request = MeasuredRequest::kNone;
  EXPECT_NE(error_of([&] {
              make_serving_case(run, qwen_on_h100(), Catalog());
            }).find("neither per-request lengths nor token totals"),
            std::string::npos);
  run = read_published_serving_rows(kRows)[0];
  run.summary = MetricsSummary{};
  EXPECT_NE(error_of([&] {
              make_serving_case(run, qwen_on_h100(), Catalog());
            }).find("measured no TTFT, TPOT, E2E or throughput"),
            std::string::npos);
}

}  // namespace
}  // namespace servesim
