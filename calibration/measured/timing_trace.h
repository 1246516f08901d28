// Reading a per-request timing trace into a MeasuredRun: one request a line, with when it was
// sent, when its first and last tokens came back (absolute timestamps in seconds, any epoch)
// and its prompt and output lengths. Two encodings, by the file's extension:
//   .jsonl  one JSON object a line: {"arrival_s": 1733000000.25, "first_token_s": ..., ...}
//   .csv    a header line naming the columns, then one row a request (no quoting needed)
// Columns (keys), each with its accepted aliases; a row may use only one name of each:
//   arrival_s      | send_time, send_s, start_time, arrival_time     required
//   first_token_s  | first_token_time                                 required for ok rows
//   last_token_s   | last_token_time, finish_s, end_time              required for ok rows
//   prompt_tokens  | input_tokens, prompt_len, input_len              required
//   output_tokens  | completion_tokens, output_len                    required for ok rows
//   error          | (text; empty or absent: the request succeeded)   optional
// Unknown columns are ignored. Arrivals become seconds since the earliest send; requests are
// kept in send order (ties in file order). ITLs are not in a trace, so the summary (computed
// from the requests, summary_of_requests) has no ITL.
//
// Strict: a missing required column, a field that is not a number, an alias clash, a first
// token before the send or a last token before the first (a negative latency), a last token
// more than 1e9 s after the send or sends spread over more than 1e9 s (timestamps not in
// seconds) is a one-line ConfigError naming the file, the line and the column.
// Stateless; thread-safe.
#pragma once

#include <string>

#include "calibration/measured/measured_run.h"

namespace servesim {

// format "trace". Throws ConfigError (also for an extension other than .jsonl or .csv).
MeasuredRun read_timing_trace(const std::string& path);

}  // namespace servesim
