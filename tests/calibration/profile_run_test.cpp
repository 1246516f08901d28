#include "calibration/profile/profile_run.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "calibration_test_util.h"
#include "models/config_error.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

void write(const std::string& path, const std::string& text) {
  std::ofstream(path) << text;
}

std::string sample_line(int shape) {
  ProfileSample s;
  s.shape = shape;
  s.seqs = {{4, 8, true}};
  s.step_s = 0.01;
  s.op_s[static_cast<size_t>(Op::kMlp)] = 0.004;
  return sample_to_json_line(s);
}

TEST(ProfileRun, SampleLinesRoundTrip) {
  const std::string dir = testing::fresh_dir("run_roundtrip");
  write(dir + "/environment.json", R"({"model": "m", "backend": "cpu"})");
  write(dir + "/samples.jsonl", sample_line(0) + "\n" + sample_line(1) + "\n");
  const ProfileRun run = load_profile_run(dir);
  ASSERT_EQ(run.samples.size(), 2u);
  EXPECT_EQ(run.samples[1].shape, 1);
  EXPECT_EQ(run.samples[0].seqs.front().context, 8);
  EXPECT_TRUE(run.samples[0].seqs.front().prefill);
  EXPECT_DOUBLE_EQ(run.samples[0].op_s[static_cast<size_t>(Op::kMlp)], 0.004);
  EXPECT_EQ(run.dropped_partial_lines, 0);
}

TEST(ProfileRun, InterruptedLastLineIsDroppedAndCounted) {
  const std::string dir = testing::fresh_dir("run_partial");
  write(dir + "/environment.json", R"({"model": "m", "backend": "cpu"})");
  const std::string line = sample_line(1);
  write(dir + "/samples.jsonl", sample_line(0) + "\n" + line.substr(0, line.size() / 2));
  const ProfileRun run = load_profile_run(dir);
  EXPECT_EQ(run.samples.size(), 1u);
  EXPECT_EQ(run.dropped_partial_lines, 1);
}

TEST(ProfileRun, GarbageInsideTheFileIsACorruptDirectory) {
  const std::string dir = testing::fresh_dir("run_corrupt");
  write(dir + "/environment.json", R"({"model": "m", "backend": "cpu"})");
  write(dir + "/samples.jsonl", sample_line(0) + "\nnot json\n" + sample_line(1) + "\n");
  EXPECT_THAT([&] { load_profile_run(dir); },
              ThrowsMessage<ConfigError>(HasSubstr("samples.jsonl:2: malformed sample line")));
}

TEST(ProfileRun, MissingPiecesSayWhatToRun) {
  EXPECT_THAT([&] { load_profile_run("/nonexistent/servesim_run"); },
              ThrowsMessage<ConfigError>(HasSubstr("run `servesim calibrate profile")));
  const std::string dir = testing::fresh_dir("run_no_env");
  EXPECT_THAT([&] { load_profile_run(dir); },
              ThrowsMessage<ConfigError>(HasSubstr("environment.json: missing")));
  write(dir + "/environment.json", R"({"model": "m", "backend": "cpu"})");
  EXPECT_THAT([&] { load_profile_run(dir); },
              ThrowsMessage<ConfigError>(HasSubstr("samples.jsonl: missing")));
}

}  // namespace
}  // namespace servesim
