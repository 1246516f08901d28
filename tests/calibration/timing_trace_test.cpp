// read_timing_trace's refusals of timestamps that read but whose differences overflow or make
// no sense in seconds — inputs of fuzz_timing_trace_csv / _jsonl
// (tests/fuzz/corpus/fuzz_timing_trace_*/regress-*): a last token more than 1e9 s after the
// send (infinite for -1e308 .. 1e308), sends spread over more than 1e9 s. Each names the file
// and the line; timestamps of any epoch within that span still read.
#include "calibration/measured/timing_trace.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include "models/config_error.h"
#include "tests/calibration/calibration_test_util.h"

namespace servesim {
namespace {

std::string write(const std::string& name, const std::string& text) {
  const std::string path = testing::fresh_dir("timing_trace_" + name) + "/" + name;
  std::ofstream(path) << text;
  return path;
}

std::string error_of(const std::string& path) {
  try {
    read_timing_trace(path);
  } catch (const ConfigError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find('\n'), std::string::npos) << what;
    EXPECT_EQ(what.rfind(path, 0), 0u) << what;
    return what;
  }
  ADD_FAILURE() << "no error for " << path;
  return "";
}

const std::string kHeader = "arrival_s,first_token_s,last_token_s,prompt_tokens,output_tokens\n";

TEST(TimingTrace, ALatencyBeyond1e9SecondsNamesItsLine) {
  EXPECT_NE(error_of(write("inf.csv", kHeader + "1,1,2,3,4\n-1e308,1e308,1e308,10,2\n"))
                .find("line 3: last_token_s 1e+308 is more than 1e9 s after arrival_s"),
            std::string::npos);
  const std::string jsonl = R"({"arrival_s": 0, "first_token_s": 1, "last_token_s": 2e9,)"
                            R"( "prompt_tokens": 1, "output_tokens": 1})";
  EXPECT_NE(error_of(write("ms.jsonl", jsonl + "\n")).find("line 1"), std::string::npos);
}

TEST(TimingTrace, SendsSpreadOverMoreThan1e9SecondsNameTheLaterLine) {
  EXPECT_NE(error_of(write("span.csv", kHeader.substr(0, kHeader.size() - 1) + ",error\n" +
                                           "1e308,,,10,0,refused\n-1e308,,,10,0,refused\n"))
                .find("line 2: arrival_s is inf s after the first send, beyond 1e9 s"),
            std::string::npos);
  const MeasuredRun run =
      read_timing_trace(write("epoch.csv", kHeader + "1.7e9,1.7e9,1700000001,5,2\n"
                                                     "1.7e9,1700000000.5,1700000002,5,2\n"));
  ASSERT_EQ(run.requests.size(), 2u);
  EXPECT_DOUBLE_EQ(run.requests[1].e2e_s, 2);
}

}  // namespace
}  // namespace servesim
