// TraceReader: streams the rows of a recorded request trace, one at a time, so a trace of
// millions of rows never has to sit in memory. Formats, auto-detected from the header:
//   azure     CSV  TIMESTAMP,ContextTokens,GeneratedTokens   (Azure LLM inference traces;
//                  TIMESTAMP is "YYYY-MM-DD HH:MM:SS[.fffffff]", read as UTC)
//   burstgpt  CSV  Timestamp,Model,Request tokens,Response tokens,Total tokens,Log Type
//                  (Timestamp in seconds; rows with 0 response tokens are kept unless
//                  skip_zero_output is set — in BurstGPT they are failed requests)
//   splitwise CSV  arrived_at,num_prefill_tokens,num_decode_tokens  (Splitwise / Vidur)
//   mooncake JSONL {"timestamp": ms, "input_length": n, "output_length": m,
//                   "hash_ids": [...]}  (each hash id names one 512-token block)
// Columns are found by name, so extra columns and any column order are accepted.
// Arrival times are seconds since the first row, multiplied by time_scale.
// Errors: ConfigError "file:line: column: expected ..., got '...'" for a malformed row, a
// timestamp earlier than the row before, or a missing column.
// Ownership: owns its file stream. Thread-safety: none.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

namespace servesim {

enum class TraceFormat { kAuto, kAzure, kBurstGpt, kSplitwise, kMooncake };

std::string_view to_string(TraceFormat format);
// Throws ConfigError for an unknown name ("auto", "azure", "burstgpt", "splitwise",
// "mooncake").
TraceFormat trace_format_from_string(std::string_view name);

struct TraceRow {
  double arrival_s = 0.0;              // seconds since the first row, scaled
  int prompt_tokens = 0;               // tokens
  int output_tokens = 0;               // tokens
  std::vector<uint64_t> block_hashes;  // mooncake only
  size_t line = 0;                     // 1-based line in the file, for messages
};

struct TraceOptions {
  TraceFormat format = TraceFormat::kAuto;
  double time_scale = 1.0;        // 0.5 replays twice as fast; must be > 0
  bool skip_zero_output = false;  // drop rows with 0 output tokens
};

class TraceReader {
 public:
  // Opens the file and reads its header. Throws ConfigError.
  TraceReader(const std::string& path, const TraceOptions& options = {});

  // Reads the next row into `row`; false at the end of the file. Throws ConfigError.
  bool next(TraceRow& row);
  TraceFormat format() const { return format_; }
  const std::string& path() const { return path_; }

 private:
  bool next_csv(TraceRow& row);
  bool next_jsonl(TraceRow& row);
  [[noreturn]] void fail(const std::string& column, const std::string& what) const;

  std::string path_;
  TraceOptions options_;
  TraceFormat format_ = TraceFormat::kAuto;
  std::ifstream in_;
  std::string line_text_;
  size_t line_ = 0;
  std::string pending_first_line_;  // a JSONL file's first line, read to detect the format
  bool has_pending_first_line_ = false;
  // CSV column indices.
  int time_col_ = -1;
  int prompt_col_ = -1;
  int output_col_ = -1;
  size_t num_cols_ = 0;
  std::string time_name_, prompt_name_, output_name_;
  std::vector<std::string_view> fields_;
  double first_time_s_ = 0.0;
  double last_time_s_ = 0.0;
  bool have_first_ = false;
};

}  // namespace servesim
