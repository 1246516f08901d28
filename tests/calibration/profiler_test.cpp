#include "calibration/profiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>

#include "calibration/profile_fitter.h"
#include "calibration/profile_run.h"
#include "calibration_test_util.h"
#include "models/config_error.h"

namespace servesim {
namespace {

using ::testing::HasSubstr;
using ::testing::ThrowsMessage;

ProfilerOptions tiny_options(const std::string& dir) {
  ProfilerOptions o;
  o.model = testing::kTinyModelPath;
  o.out_dir = dir;
  o.repeats = 2;
  o.warmup = 0;
  o.measure_device = false;
  o.grid = {.max_tokens = 64, .max_seqs = 4, .max_context = 128, .quick = true};
  return o;
}

TEST(Profiler, WritesOneSamplePerShapeAndRepeatWithTheEnvironment) {
  const std::string dir = testing::fresh_dir("profiler_basic");
  const ProfilerOptions o = tiny_options(dir);
  int last_done = 0, last_total = 0;
  const ProfilerSummary s = run_profile(o, Catalog(), [&](int done, int total) {
    last_done = done;
    last_total = total;
  });
  const size_t shapes = make_profile_grid(o.grid).size();
  EXPECT_EQ(s.shapes, static_cast<int>(shapes));
  EXPECT_EQ(s.samples_written, static_cast<int>(2 * shapes));
  EXPECT_EQ(last_done, last_total);
  const ProfileRun run = load_profile_run(dir);
  EXPECT_EQ(run.samples.size(), 2 * shapes);
  EXPECT_EQ(run.environment["model"], "Llama-tiny-calib");
  EXPECT_EQ(run.environment["backend"], "cpu");
  EXPECT_TRUE(run.environment.contains("git_revision"));
  EXPECT_TRUE(run.environment.contains("date"));
  for (const ProfileSample& p : run.samples) {
    EXPECT_GT(p.step_s, 0.0);
    EXPECT_GT(p.op_s[static_cast<size_t>(Op::kMlp)], 0.0);
    double ops = 0;
    for (double t : p.op_s) ops += t;
    EXPECT_LE(ops, p.step_s * 1.0001);  // the timed ops lie inside the step
  }
}

TEST(Profiler, ResumesAnInterruptedRunWithoutRemeasuring) {
  const std::string dir = testing::fresh_dir("profiler_resume");
  const ProfilerOptions o = tiny_options(dir);
  run_profile(o, Catalog());
  const std::string path = dir + "/samples.jsonl";
  std::string text;
  {
    std::ifstream in(path);
    text.assign(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
  }
  // Keep three whole lines and half of the fourth, as a kill mid-write leaves it.
  size_t cut = 0;
  for (int i = 0; i < 3; ++i) cut = text.find('\n', cut) + 1;
  const size_t fourth_end = text.find('\n', cut);
  std::ofstream(path, std::ios::trunc) << text.substr(0, cut + (fourth_end - cut) / 2);

  const ProfilerSummary s = run_profile(o, Catalog());
  EXPECT_EQ(s.samples_resumed, 3);
  EXPECT_EQ(s.samples_written + s.samples_resumed, 2 * s.shapes);
  const ProfileRun run = load_profile_run(dir);
  EXPECT_EQ(run.dropped_partial_lines, 0);
  EXPECT_EQ(run.samples.size(), static_cast<size_t>(2 * s.shapes));

  const ProfilerSummary again = run_profile(o, Catalog());
  EXPECT_EQ(again.samples_written, 0);
}

TEST(Profiler, RefusesToMixRunsOfOtherOptions) {
  const std::string dir = testing::fresh_dir("profiler_mix");
  ProfilerOptions o = tiny_options(dir);
  run_profile(o, Catalog());
  o.threads = 2;
  EXPECT_THAT([&] { run_profile(o, Catalog()); },
              ThrowsMessage<ConfigError>(HasSubstr("holds a profile with threads = 1, not 2")));
}

TEST(Profiler, BadOptionsAreOneLineErrors) {
  ProfilerOptions o = tiny_options(testing::fresh_dir("profiler_bad"));
  o.backend = "tpu";
  EXPECT_THAT([&] { run_profile(o, Catalog()); },
              ThrowsMessage<ConfigError>(HasSubstr("--backend must be cpu or cuda")));
  o = tiny_options(o.out_dir);
  o.grid.max_context = 4096;
  o.grid.max_tokens = 64;
  EXPECT_THAT([&] { run_profile(o, Catalog()); },
              ThrowsMessage<ConfigError>(HasSubstr("exceeds Llama-tiny-calib's 2048 positions")));
  o = tiny_options(o.out_dir);
  o.grid.max_tokens = 8;
  EXPECT_THAT([&] { run_profile(o, Catalog()); },
              ThrowsMessage<ConfigError>(HasSubstr("--max-tokens must be >= 16")));
  o = tiny_options(o.out_dir);
  o.model = "Mixtral-8x7B";
  EXPECT_THROW(run_profile(o, Catalog()), ConfigError);
}

}  // namespace
}  // namespace servesim
