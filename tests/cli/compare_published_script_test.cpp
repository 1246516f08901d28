// scripts/compare_published_h100.sh, run as docs/validation.md runs it, on rows written here:
// a row whose `precision` says fp8 is simulated with fp8 weights, the others as published;
// each row on its own model and GPU.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "cli_runner.h"

namespace servesim {
namespace {

testing::CliResult run_script_with(const std::string& csv, const std::string& flags) {
  return testing::run_command("env SERVESIM_BIN=" + std::string(SERVESIM_BIN) + " bash " +
                              std::string(SERVESIM_SOURCE_DIR) +
                              "/scripts/compare_published_h100.sh --csv " + csv + " " + flags);
}

std::string run_script(const std::string& csv, const std::string& flags = "") {
  const testing::CliResult r = run_script_with(csv, flags);
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  return r.out;
}

std::filesystem::path write_rows(const std::string& name, const std::string& rows) {
  const std::filesystem::path csv =
      std::filesystem::temp_directory_path() /
      ("servesim_compare_published_" + name + "_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(csv) << "engine,engine_version,model,gpu,precision,mode,isl,osl,concurrency,tp,pp,"
                        "ttft_ms,tpot_ms\n"
                     << rows;
  return csv;
}

// The script's output on `rows`, the file removed again.
std::string run_rows(const std::string& name, const std::string& rows) {
  const std::filesystem::path csv = write_rows(name, rows);
  const std::string out = run_script(csv.string());
  std::filesystem::remove(csv);
  return out;
}

// The run ended with exit status 2 and one error line containing `what`, before any table.
void expect_refused(const testing::CliResult& r, const std::string& what) {
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  EXPECT_EQ(r.out, "");
}

// The table's cells of the row whose second cell is `weights`.
std::vector<std::string> row_of(const std::string& table, const std::string& weights) {
  std::istringstream lines(table);
  for (std::string line; std::getline(lines, line);) {
    std::vector<std::string> cells;
    std::istringstream fields(line);
    for (std::string cell; std::getline(fields, cell, '|');) {
      const size_t first = cell.find_first_not_of(' ');
      const size_t last = cell.find_last_not_of(' ');
      if (first != std::string::npos) cells.push_back(cell.substr(first, last - first + 1));
    }
    if (cells.size() == 11 && cells[1] == weights) return cells;
  }
  ADD_FAILURE() << "no " << weights << " row in\n" << table;
  return std::vector<std::string>(11, "0");
}

TEST(ComparePublishedScript, AnFp8RowIsSimulatedWithFp8Weights) {
  const std::string out =
      run_rows("fp8",
               "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,fp8,agg,1024,128,8,2,1,150,10\n"
               "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,agg,1024,128,8,2,1,150,18\n");
  EXPECT_NE(out.find("All 2 rows."), std::string::npos) << out;
  // Neither row has input = output = 1024: that group has no mean, and says so.
  EXPECT_NE(out.find("fitted on these 0 rows): no rows."), std::string::npos) << out;
  EXPECT_EQ(out.find("nan"), std::string::npos) << out;
  // Rows of mixed weights are also summed up by weights, bf16 first.
  const size_t bf16_line = out.find("bf16 weights (1 rows): TTFT ");
  EXPECT_NE(bf16_line, std::string::npos) << out;
  EXPECT_GT(out.find("fp8 weights (1 rows): TTFT "), bf16_line) << out;
  // At 8 sequences a decode step streams the weights: fp8 halves them, so the same row's
  // predicted TPOT (cell 9) falls by far more than run-to-run noise would move it.
  const double fp8_tpot = std::stod(row_of(out, "fp8")[9]);
  const double bf16_tpot = std::stod(row_of(out, "bf16")[9]);
  EXPECT_GT(fp8_tpot, 0);
  EXPECT_LT(fp8_tpot, 0.8 * bf16_tpot) << out;
}

TEST(ComparePublishedScript, AiconfiguratorsProtocolStartsTheEngineWithItsGeneratedLimits) {
  // The same aiperf requests (20 x clients of exact lengths, the start in the means): on vLLM's
  // default budget of 8,192 tokens the eight 1,024-token prompts share prefill steps in a
  // lock-step cohort of eight; on 8 + 1,024 + 1,500 tokens they go in groups of about two,
  // so each waits for far fewer prefills (cell 6: predicted TTFT).
  const std::filesystem::path csv =
      write_rows("aic", "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,agg,1024,128,8,2,1,154,18\n");
  const std::string aiperf_table = run_script(csv.string(), "--protocol aiperf");
  EXPECT_EQ(aiperf_table.find(" weights ("), std::string::npos) << "one kind of weights";
  const double aiperf = std::stod(row_of(aiperf_table, "bf16")[6]);
  const double generated =
      std::stod(row_of(run_script(csv.string(), "--protocol aiconfigurator"), "bf16")[6]);
  // --batch-size 8 is the row's own clients; a warm-up carried into the measured phase
  // leaves the start, when all 8 prompts queue at once, out of the means.
  const double batch_8 = std::stod(row_of(run_script(csv.string(), "--batch-size 8"), "bf16")[6]);
  const double carried =
      std::stod(row_of(run_script(csv.string(), "--warmup-per-client 2"), "bf16")[6]);
  const testing::CliResult bad = run_script_with(csv.string(), "--protocol aiconfigurater");
  const testing::CliResult bad_batch = run_script_with(csv.string(), "--batch-size eight");
  const testing::CliResult steady_batch =
      run_script_with(csv.string(), "--protocol steady --batch-size 8");
  std::filesystem::remove(csv);
  EXPECT_LT(generated, 0.7 * aiperf) << generated << " " << aiperf;
  EXPECT_EQ(batch_8, generated);
  EXPECT_LT(carried, generated) << "the start's queue out of the means";
  expect_refused(bad_batch, "--batch-size must be a whole number");
  expect_refused(steady_batch, "--batch-size goes with --protocol aiconfigurator");
  expect_refused(bad,
                 "--protocol must be steady, inferencex, aiperf, aiconfigurator or inferencemax");
}

// --dataset-entries N: the benchmark's requests drew from N prompts, so repeats prefill from
// the prefix cache: with 8 prompts among the 80 requests of 4 clients, TTFT (cell 6) falls far.
TEST(ComparePublishedScript, ADatasetOfFewPromptsIsServedFromThePrefixCache) {
  const std::filesystem::path csv = write_rows(
      "entries",
      "vllm,0.12.0,nvidia/Llama-3.1-8B-Instruct-FP8,h200_sxm,fp8,agg,4000,100,4,1,1,100,8\n");
  const double fresh = std::stod(row_of(run_script(csv.string()), "fp8")[6]);
  const double reused =
      std::stod(row_of(run_script(csv.string(), "--dataset-entries 8"), "fp8")[6]);
  const testing::CliResult zero = run_script_with(csv.string(), "--dataset-entries 0");
  const testing::CliResult word = run_script_with(csv.string(), "--dataset-entries many");
  std::filesystem::remove(csv);
  EXPECT_LT(reused, 0.6 * fresh) << reused << " " << fresh;
  expect_refused(zero, "--dataset-entries must be a whole number of prompts, 1 to 1000000");
  expect_refused(word, "--dataset-entries must be a whole number of prompts, 1 to 1000000");
}

// --check: the prefill a row's measured cycle asks of the GPU. 64 clients whose 8,000-token
// prompts come back every 8,000 / 1000 + 99 x 5 ms = 0.58 s ask ~110 prompts a second, far
// beyond one H200's prefill; 2 clients with long outputs ask little.
TEST(ComparePublishedScript, TheCheckFlagsRowsThatAskMorePrefillThanTheGpuHas) {
  const std::filesystem::path csv = write_rows(
      "check",
      "vllm,0.12.0,nvidia/Llama-3.1-8B-Instruct-FP8,h200_sxm,fp8,agg,8000,100,64,1,1,80,5\n"
      "vllm,0.12.0,nvidia/Llama-3.1-8B-Instruct-FP8,h200_sxm,,agg,8000,2000,2,1,1,300,8\n");
  const std::string out = run_script(csv.string(), "--check");
  const testing::CliResult both = run_script_with(csv.string(), "--check --split");
  std::filesystem::remove(csv);
  EXPECT_NE(out.find("1 of 2 rows ask more than one second of prefill per second of the GPU as "
                     "servesim prices it"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("1 even with every kernel at its peak and no host time: measured as "
                     "recorded, those rows' prompts must have repeated"),
            std::string::npos)
      << out;
  // | TP | weights | ISL | OSL | clients | TTFT | TPOT | requests/s | prefill alone | s per s |
  // at peak | s per s |
  std::vector<std::string> cells;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("| 1 | fp8 |", 0) == 0) {
      std::istringstream fields(line);
      for (std::string cell; std::getline(fields, cell, '|');) {
        if (cell.find_first_not_of(' ') != std::string::npos) cells.push_back(cell);
      }
    }
  }
  ASSERT_EQ(cells.size(), 12u) << out;
  EXPECT_NEAR(std::stod(cells[7]), 64 / (0.080 + 99 * 0.005), 0.1);
  // At peak a prefill is faster than as priced, and still too slow for this row.
  EXPECT_GT(std::stod(cells[10]), 0);
  EXPECT_LT(std::stod(cells[10]), std::stod(cells[8]));
  EXPECT_GT(std::stod(cells[9]), std::stod(cells[11]));
  EXPECT_GT(std::stod(cells[11]), 1) << out;
  expect_refused(both, "--check and --split print different tables");
}

// scripts/error_breakdown.awk run on `table`.
testing::CliResult breakdown_of(const std::string& table) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() / ("servesim_breakdown_" + std::to_string(::getpid()));
  std::ofstream(file) << table;
  const testing::CliResult r =
      testing::run_command("awk -F'|' -f " + std::string(SERVESIM_SOURCE_DIR) +
                           "/scripts/error_breakdown.awk " + file.string());
  std::filesystem::remove(file);
  return r;
}

// A file of two deployments: each row runs on its own model and GPU, named in two columns more,
// and the summary splits the errors by GPU.
TEST(ComparePublishedScript, EachRowRunsOnItsOwnModelAndGpu) {
  const std::string out =
      run_rows("mixed",
               "vllm,,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,1024,1024,8,4,1,101.1,10.1\n"
               "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,agg,1024,128,8,2,1,154.2,18.0\n");
  EXPECT_NE(out.find("| model | GPU | TP | weights |"), std::string::npos) << out;
  EXPECT_NE(out.find("| Llama-3.1-70B | H200 | 4 | fp8 | 1024 | 1024 | 8 |"), std::string::npos)
      << out;
  EXPECT_NE(out.find("| Qwen3-32B | H100-SXM | 2 | bf16 | 1024 | 128 | 8 |"), std::string::npos)
      << out;
  EXPECT_NE(out.find("on H100-SXM (1 rows): TTFT "), std::string::npos) << out;
  EXPECT_NE(out.find("on H200 (1 rows): TTFT "), std::string::npos) << out;

  // scripts/error_breakdown.awk reads that table: one line per GPU and lengths, then the counts.
  const testing::CliResult breakdown = breakdown_of(out);
  EXPECT_EQ(breakdown.exit_code, 0) << breakdown.err;
  EXPECT_NE(breakdown.out.find("H100-SXM 1024/128: TTFT "), std::string::npos) << breakdown.out;
  EXPECT_NE(breakdown.out.find("H200 1024/1024: TTFT "), std::string::npos) << breakdown.out;
  EXPECT_NE(breakdown.out.find("of 2 within 20%"), std::string::npos) << breakdown.out;
  EXPECT_NE(breakdown.out.find("rows with measured TTFT under 5 s: 2,"), std::string::npos)
      << breakdown.out;
}

// A table of one deployment has no model and GPU columns: the breakdown goes by lengths alone,
// and reads every row, not the header; input that is no table is refused in one line.
TEST(ComparePublishedScript, TheBreakdownReadsATableOfOneDeploymentToo) {
  const std::string out =
      run_rows("single",
               "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,agg,1024,128,8,2,1,154.2,18.0\n"
               "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,agg,4096,128,8,4,1,419.2,16.5\n");
  ASSERT_EQ(out.find("| model |"), std::string::npos) << out;
  const testing::CliResult breakdown = breakdown_of(out);
  EXPECT_EQ(breakdown.exit_code, 0) << breakdown.err;
  EXPECT_NE(breakdown.out.find("all 1024/128: TTFT "), std::string::npos) << breakdown.out;
  EXPECT_NE(breakdown.out.find("all 4096/128: TTFT "), std::string::npos) << breakdown.out;
  EXPECT_NE(breakdown.out.find(" of 2 within 20%"), std::string::npos) << breakdown.out;
  EXPECT_EQ(breakdown.out.find("0/0"), std::string::npos) << breakdown.out;
  // Per TP, and per TP and input length, with the milliseconds behind the percentages.
  EXPECT_NE(breakdown.out.find("all TP 2 (1 rows): TTFT "), std::string::npos) << breakdown.out;
  EXPECT_NE(breakdown.out.find("all TP 4 input 4096 (1 rows): TTFT "), std::string::npos)
      << breakdown.out;
  EXPECT_NE(breakdown.out.find("), measured 16.50 ms"), std::string::npos) << breakdown.out;

  const testing::CliResult nothing = breakdown_of("no table here\n");
  EXPECT_EQ(nothing.exit_code, 1);
  EXPECT_NE(nothing.out.find("no table rows"), std::string::npos) << nothing.out;
}

// InferenceMAX's recipe starts vLLM with an fp8 KV cache: where the KV cache is much of what a
// decode step reads (8k-token prompts, 32 clients), the row decodes faster than the same recipe
// with vLLM's default 16-bit cache.
TEST(ComparePublishedScript, InferenceMaxStartsVllmWithItsRecipesFlags) {
  const std::filesystem::path csv =
      write_rows("inferencemax",
                 "vllm,,meta-llama/Llama-3.1-70B,h200_sxm,fp8,agg,8192,1024,32,4,1,801.1,20.1\n");
  const double recipe =
      std::stod(row_of(run_script(csv.string(), "--protocol inferencemax"), "fp8")[9]);
  const double bf16_cache = std::stod(row_of(
      run_script(csv.string(), "--protocol inferencemax --set engine.kv_cache_dtype='\"auto\"'"),
      "fp8")[9]);
  std::filesystem::remove(csv);
  EXPECT_GT(recipe, 0);
  EXPECT_LT(recipe, 0.97 * bf16_cache) << recipe << " " << bf16_cache;
}

// On B200 the recipe graphs whole decode batches (cudagraph_mode FULL_DECODE_ONLY), where vLLM
// 0.10's default graphs leave attention to be launched in every layer: its decode is faster.
TEST(ComparePublishedScript, InferenceMaxsB200RecipeGraphsWholeDecodeSteps) {
  const std::filesystem::path csv =
      write_rows("inferencemax-b200",
                 "vllm,,meta-llama/Llama-3.1-70B,b200_sxm,fp8,agg,1024,1024,4,8,1,100.4,6.3\n");
  const double recipe =
      std::stod(row_of(run_script(csv.string(), "--protocol inferencemax"), "fp8")[9]);
  const double piecewise = std::stod(
      row_of(run_script(csv.string(),
                        "--protocol inferencemax --set engine.cudagraph_mode='\"PIECEWISE\"'"),
             "fp8")[9]);
  std::filesystem::remove(csv);
  EXPECT_GT(recipe, 0);
  // 80 layers x 3 launches x 5 us = 1.2 ms more per decode step without whole-model graphs.
  EXPECT_NEAR(piecewise - recipe, 1.2, 0.15) << recipe << " " << piecewise;
}

// The script's run on a file of one row, the file removed again.
testing::CliResult run_row(const std::string& name, const std::string& row) {
  const std::filesystem::path csv = write_rows(name, row + "\n");
  const testing::CliResult r = run_script_with(csv.string(), "");
  std::filesystem::remove(csv);
  return r;
}

// A Hugging Face id names the catalog's model whatever its case: openai/gpt-oss-120b is
// GPT-OSS-120B, and its row runs.
TEST(ComparePublishedScript, AModelIdMatchesTheCatalogWhateverItsCase) {
  const testing::CliResult r =
      run_row("case", "vllm,0.12.0,openai/gpt-oss-120b,h100_sxm,,agg,1024,128,8,2,1,150,18");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("| 2 | bf16 | 1024 | 128 | 8 | 150.0 |"), std::string::npos) << r.out;
}

TEST(ComparePublishedScript, ARowOutsideTheCatalogIsRefusedInOneLine) {
  expect_refused(run_row("model", "vllm,,acme/Foo-7B,h100_sxm,,agg,1024,128,8,2,1,150,18"),
                 "row 2: model 'acme/Foo-7B' is not in servesim's catalog");
  expect_refused(run_row("gpu", "vllm,,Qwen/Qwen3-32B,mi300x,,agg,1024,128,8,2,1,150,18"),
                 "row 2: gpu 'mi300x' is not one this script maps");
  expect_refused(
      run_row("version", "vllm,latest,Qwen/Qwen3-32B,h100_sxm,,agg,1024,128,8,2,1,150,18"),
      "row 2: engine_version 'latest' is not a vLLM release");
}

TEST(ComparePublishedScript, AFileWithoutRowsIsRefusedInOneLine) {
  expect_refused(run_row("empty", ""), "has no rows under its header");
}

// A provenance file: what the rows' source records of each run.
std::filesystem::path write_provenance(const std::string& name, const std::string& rows) {
  const std::filesystem::path file =
      std::filesystem::temp_directory_path() /
      ("servesim_provenance_" + name + "_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(file) << "tp,precision,isl,osl,concurrency,recorded_concurrency,upstream_id\n"
                      << rows;
  return file;
}

const char kTwoRuns[] =
    "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,,agg,1024,128,8,2,1,154.2,18.0\n"
    "vllm,0.12.0,Qwen/Qwen3-32B,h100_sxm,fp8,agg,4000,1000,48,2,1,184.6,11.6\n";

// A run whose source records no concurrency (its clients column holds the deployment's batch
// size) is named, and the errors over the runs measured at the load they name are given apart.
TEST(ComparePublishedScript, ARunWhoseSourceRecordsNoConcurrencyIsNamedAndSetApart) {
  const std::filesystem::path csv = write_rows("prov", kTwoRuns);
  const std::filesystem::path prov = write_provenance("prov",
                                                      "2,,1024,128,8,8,a_c8_tp2\n"
                                                      "2,fp8,4000,1000,48,,b_c_tp2\n");
  const std::string with = run_script(csv.string(), "--provenance " + prov.string());
  const std::string without = run_script(csv.string());
  std::filesystem::remove(csv);
  std::filesystem::remove(prov);
  EXPECT_NE(with.find("All 2 rows."), std::string::npos) << with;
  EXPECT_NE(with.find("Measured at the concurrency they name (1 rows): TTFT "), std::string::npos)
      << with;
  EXPECT_NE(with.find("the 0 fitted on: no rows; held out (1): TTFT "), std::string::npos) << with;
  EXPECT_NE(with.find("(their source records none, " + prov.string() +
                      "): TP 2 fp8 4000/1000 (48 in its clients column)."),
            std::string::npos)
      << with;
  // The bf16 run alone is what the set-apart means cover: the errors of its weights' line.
  // ("TTFT x%, TPOT y%" after `label`).
  const auto errors_after = [&](const std::string& label) {
    const size_t at = with.find(label);
    if (at == std::string::npos) return std::string("(no ") + label + ")";
    const size_t from = at + label.size();
    const size_t end = with.find('%', with.find('%', from) + 1);
    return with.substr(from, end - from + 1);
  };
  EXPECT_EQ(errors_after("Measured at the concurrency they name (1 rows): "),
            errors_after("bf16 weights (1 rows): "))
      << with;
  // Without a provenance nothing is set apart.
  EXPECT_EQ(without.find("Measured at the concurrency"), std::string::npos) << without;
}

TEST(ComparePublishedScript, AProvenanceThatDoesNotDescribeTheRunsIsRefusedInOneLine) {
  const std::filesystem::path csv = write_rows("badprov", kTwoRuns);
  const auto refused_with = [&](const std::string& name, const std::string& rows) {
    const std::filesystem::path prov = write_provenance(name, rows);
    const testing::CliResult r = run_script_with(csv.string(), "--provenance " + prov.string());
    std::filesystem::remove(prov);
    return r;
  };
  expect_refused(refused_with("missing", "2,,1024,128,8,8,a\n"),
                 "row 3 (TP 2, 4000/1000, 48 clients) has no entry in");
  expect_refused(refused_with("twice", "2,,1024,128,8,8,a\n2,,1024,128,8,8,a\n"),
                 "row 3: a second entry for the run at TP 2, 1024/128, 8 clients");
  expect_refused(refused_with("other", "2,,1024,128,8,16,a\n2,fp8,4000,1000,48,,b\n"),
                 "row 2 names 8 clients where");
  expect_refused(refused_with("word", "2,,1024,128,8,eight,a\n2,fp8,4000,1000,48,,b\n"),
                 "recorded_concurrency must be a whole number of clients or empty");
  expect_refused(refused_with("short", "2,,1024,128,8,8\n"), "row 2: 7 fields expected");
  const std::filesystem::path header =
      std::filesystem::temp_directory_path() /
      ("servesim_provenance_header_" + std::to_string(::getpid()) + ".csv");
  std::ofstream(header) << "tp,isl,osl\n";
  expect_refused(run_script_with(csv.string(), "--provenance " + header.string()),
                 "its header must be tp,precision,isl,osl,concurrency,recorded_concurrency");
  expect_refused(run_script_with(csv.string(), "--provenance /nonexistent/provenance.csv"),
                 "cannot read --provenance /nonexistent/provenance.csv");
  std::filesystem::remove(header);
  std::filesystem::remove(csv);
}

// The service layer's fidelity target (issue 15) on the shared Qwen3-32B / H100 rows, with the
// default frontend and one prediction per row: mean absolute TTFT error within 20% and TPOT
// within 10% over the runs measured at the concurrency they name, and over those held out from
// the host overheads' fit.
TEST(ComparePublishedScript, ThePublishedQwenRunsMeetTheServiceLayersTarget) {
  const std::filesystem::path data =
      std::filesystem::path(SERVESIM_SOURCE_DIR) /
      "../shared/reference/measured/published-vllm-h100-qwen3-32b.csv";
  if (!std::filesystem::exists(data)) GTEST_SKIP() << "no shared reference data at " << data;
  const testing::CliResult r =
      testing::run_command("env SERVESIM_BIN=" + std::string(SERVESIM_BIN) + " bash " +
                           std::string(SERVESIM_SOURCE_DIR) + "/scripts/compare_published_h100.sh");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string key = "Measured at the concurrency they name (";
  const size_t line = r.out.find(key);
  ASSERT_NE(line, std::string::npos) << r.out;
  double ttft = 0, tpot = 0, fit_ttft = 0, fit_tpot = 0, held_ttft = 0, held_tpot = 0;
  int rows = 0, fit = 0, held = 0;
  ASSERT_EQ(
      std::sscanf(r.out.c_str() + line,
                  "Measured at the concurrency they name (%d rows): TTFT %lf%%, TPOT %lf%%; "
                  "the %d fitted on: TTFT %lf%%, TPOT %lf%%; held out (%d): TTFT %lf%%, "
                  "TPOT %lf%%.",
                  &rows, &ttft, &tpot, &fit, &fit_ttft, &fit_tpot, &held, &held_ttft, &held_tpot),
      9)
      << r.out.substr(line);
  EXPECT_EQ(rows, 90);
  EXPECT_EQ(fit, 15);
  EXPECT_EQ(held, 75);
  EXPECT_LE(ttft, 20.0);
  EXPECT_LE(tpot, 10.0);
  EXPECT_LE(held_ttft, 20.0);
  EXPECT_LE(held_tpot, 10.0);
  // The three runs whose source records no concurrency are named, not dropped in silence.
  EXPECT_NE(r.out.find("TP 8 fp8 4000/1000 (144 in its clients column); TP 2 fp8 4000/1000 (48 "
                       "in its clients column); TP 1 fp8 4000/1000 (24 in its clients column)."),
            std::string::npos)
      << r.out;
}

}  // namespace
}  // namespace servesim
