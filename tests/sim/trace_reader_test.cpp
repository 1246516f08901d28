#include "sim/workload/trace_reader.h"

#include <gtest/gtest.h>

#include <fstream>
#include <vector>

#include "models/config_error.h"

namespace servesim {
namespace {

std::string write_file(const std::string& name, const std::string& text) {
  const std::string path = ::testing::TempDir() + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::vector<TraceRow> read_all(const std::string& path, const TraceOptions& options = {}) {
  TraceReader reader(path, options);
  std::vector<TraceRow> rows;
  TraceRow row;
  while (reader.next(row)) rows.push_back(row);
  return rows;
}

std::string error_of(const std::string& path, const TraceOptions& options = {}) {
  try {
    read_all(path, options);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "no error";
}

TEST(TraceReaderTest, AzureDatetimesBecomeSecondsSinceFirstRow) {
  const std::string path = write_file("azure.csv",
                                      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                      "2023-11-16 18:15:46.6805900,374,44\n"
                                      "2023-11-16 18:15:50.9951690,396,109\n"
                                      "2023-11-16 23:59:59.0000000,10,1\n"
                                      "2023-11-17 00:00:01.5,20,2\r\n");
  TraceReader reader(path);
  EXPECT_EQ(reader.format(), TraceFormat::kAzure);
  const std::vector<TraceRow> rows = read_all(path);
  ASSERT_EQ(rows.size(), 4u);
  EXPECT_DOUBLE_EQ(rows[0].arrival_s, 0.0);
  EXPECT_NEAR(rows[1].arrival_s, 4.314579, 1e-6);
  EXPECT_NEAR(rows[3].arrival_s - rows[2].arrival_s, 2.5, 1e-6);  // across midnight
  EXPECT_EQ(rows[1].prompt_tokens, 396);
  EXPECT_EQ(rows[1].output_tokens, 109);
  EXPECT_EQ(rows[3].line, 5u);
}

TEST(TraceReaderTest, AzureBadCountNamesFileLineAndColumn) {
  const std::string path = write_file("azure_bad.csv",
                                      "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                      "2023-11-16 18:15:46.6805900,374,44\n"
                                      "2023-11-16 18:15:47.6805900,374,abc\n");
  EXPECT_EQ(error_of(path),
            path + ":3: GeneratedTokens: expected a non-negative integer, got 'abc'");
  const std::string bad_time = write_file("azure_bad_time.csv",
                                          "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                                          "2023-13-16 18:15:46,374,44\n");
  EXPECT_EQ(error_of(bad_time), bad_time +
                                    ":2: TIMESTAMP: expected a date-time like 2023-11-16 "
                                    "18:15:46.6805900, got '2023-13-16 18:15:46'");
}

TEST(TraceReaderTest, BurstGptColumnsAndOptionalSkipOfFailedRows) {
  const std::string path =
      write_file("burst.csv",
                 "Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type\n"
                 "5,ChatGPT,472,18,490,Conversation log\n"
                 "45,ChatGPT,1087,0,1087,Conversation log\n"
                 "118,GPT-4,417,276,693,\"API log\"\n");
  const std::vector<TraceRow> all = read_all(path);
  ASSERT_EQ(all.size(), 3u);
  EXPECT_DOUBLE_EQ(all[2].arrival_s, 113.0);
  EXPECT_EQ(all[2].prompt_tokens, 417);
  EXPECT_EQ(all[2].output_tokens, 276);
  TraceOptions skip;
  skip.skip_zero_output = true;
  skip.time_scale = 0.5;
  const std::vector<TraceRow> ok = read_all(path, skip);
  ASSERT_EQ(ok.size(), 2u);
  EXPECT_DOUBLE_EQ(ok[1].arrival_s, 56.5);
  EXPECT_EQ(ok[1].line, 4u);
}

TEST(TraceReaderTest, SplitwiseReferenceTraceReadsCompletely) {
  const std::string path =
      std::string(SERVESIM_SOURCE_DIR) + "/configs/workloads/traces/splitwise_conv.csv";
  TraceReader reader(path);
  EXPECT_EQ(reader.format(), TraceFormat::kSplitwise);
  TraceRow row;
  size_t n = 0;
  double last = 0.0;
  while (reader.next(row)) {
    ASSERT_GE(row.arrival_s, last);
    last = row.arrival_s;
    ++n;
    if (n == 2) {
      EXPECT_NEAR(row.arrival_s, 4.314579, 1e-9);
      EXPECT_EQ(row.prompt_tokens, 396);
      EXPECT_EQ(row.output_tokens, 109);
    }
  }
  EXPECT_EQ(n, 19366u);  // every data row of the 19,367-line file
}

TEST(TraceReaderTest, MooncakeJsonlWithHashIds) {
  const std::string path = write_file(
      "mooncake.jsonl",
      "{\"timestamp\": 27482, \"input_length\": 6955, \"output_length\": 52, \"hash_ids\": "
      "[46, 47, 48]}\n"
      "\n"
      "{\"timestamp\": 30535, \"input_length\": 6472, \"output_length\": 26, \"hash_ids\": "
      "[46, 52]}\n");
  TraceReader reader(path);
  EXPECT_EQ(reader.format(), TraceFormat::kMooncake);
  const std::vector<TraceRow> rows = read_all(path);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_DOUBLE_EQ(rows[1].arrival_s, 3.053);
  EXPECT_EQ(rows[0].block_hashes, (std::vector<uint64_t>{46, 47, 48}));
  EXPECT_EQ(rows[1].block_hashes, (std::vector<uint64_t>{46, 52}));
  EXPECT_EQ(rows[1].line, 3u);
}

TEST(TraceReaderTest, MooncakeBadLinesNameTheLine) {
  const std::string missing =
      write_file("mc_missing.jsonl",
                 "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n"
                 "{\"timestamp\": 1, \"input_length\": 5}\n");
  EXPECT_EQ(error_of(missing), missing + ":2: output_length: missing");
  const std::string negative = write_file(
      "mc_negative.jsonl", "{\"timestamp\": 0, \"input_length\": -5, \"output_length\": 1}\n");
  EXPECT_EQ(error_of(negative),
            negative + ":1: input_length: expected a non-negative integer, got -5");
  const std::string broken = write_file(
      "mc_broken.jsonl",
      "{\"timestamp\": 0, \"input_length\": 5, \"output_length\": 1}\n{\"timestamp\": 1,\n");
  EXPECT_EQ(error_of(broken).rfind(broken + ":2: line: invalid JSON", 0), 0u) << error_of(broken);
}

// Fuzz finding (fuzz_trace_mooncake): a number beyond a double is nlohmann's out_of_range,
// not its parse_error, and escaped the reader as an exception of another type.
TEST(TraceReaderTest, MooncakeNumberBeyondADoubleNamesTheLine) {
  const std::string path =
      write_file("mc_huge.jsonl", R"({"timestamp": 0, "input_length": 1e400, "output_length": 1})"
                                  "\n");
  EXPECT_NE(error_of(path).find("mc_huge.jsonl:1: line: invalid JSON"), std::string::npos)
      << error_of(path);
}

TEST(TraceReaderTest, RejectsUnknownHeadersShortRowsAndBackwardsTime) {
  const std::string unknown = write_file("unknown.csv", "time,in,out\n0,1,2\n");
  EXPECT_EQ(error_of(unknown).rfind(unknown + ":1: unrecognised trace header", 0), 0u);
  const std::string short_row =
      write_file("short.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n0,1\n");
  EXPECT_EQ(error_of(short_row),
            short_row + ":2: arrived_at: expected 3 columns as in the header, got 2");
  const std::string backwards = write_file(
      "backwards.csv", "arrived_at,num_prefill_tokens,num_decode_tokens\n0,1,1\n2,1,1\n1,1,1\n");
  EXPECT_EQ(error_of(backwards), backwards +
                                     ":4: arrived_at: time goes backwards (1 is before the row "
                                     "above); sort the trace by time");
  TraceOptions azure;
  azure.format = TraceFormat::kAzure;
  EXPECT_EQ(error_of(short_row, azure), short_row + ":1: azure trace has no column 'TIMESTAMP'");
  EXPECT_EQ(error_of(::testing::TempDir() + "/does_not_exist.csv"),
            ::testing::TempDir() + "/does_not_exist.csv: cannot open trace file");
  EXPECT_THROW(trace_format_from_string("azur"), ConfigError);
  EXPECT_EQ(trace_format_from_string("mooncake"), TraceFormat::kMooncake);
}

}  // namespace
}  // namespace servesim
