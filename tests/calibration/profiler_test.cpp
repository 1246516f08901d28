#include "calibration/profile/profiler.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "calibration/profile/profile_fitter.h"
#include "calibration/profile/profile_run.h"
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

TEST(Profiler, MeasuresInRoundsEachShapeOnceInAShuffledOrder) {
  const std::string dir = testing::fresh_dir("profiler_rounds");
  const ProfilerOptions o = tiny_options(dir);
  run_profile(o, Catalog());
  const ProfileRun run = load_profile_run(dir);
  const size_t shapes = make_profile_grid(o.grid).size();
  ASSERT_EQ(run.samples.size(), 2 * shapes);
  // Round 0 holds every shape once before any shape's second repeat.
  std::vector<int> round0, round1;
  for (size_t i = 0; i < shapes; ++i) {
    EXPECT_EQ(run.samples[i].repeat, 0);
    EXPECT_EQ(run.samples[shapes + i].repeat, 1);
    round0.push_back(run.samples[i].shape);
    round1.push_back(run.samples[shapes + i].shape);
  }
  std::vector<int> grid_order(shapes);
  for (size_t i = 0; i < shapes; ++i) grid_order[i] = static_cast<int>(i);
  EXPECT_TRUE(std::is_permutation(round0.begin(), round0.end(), grid_order.begin()));
  EXPECT_TRUE(std::is_permutation(round1.begin(), round1.end(), grid_order.begin()));
  // Shuffled, each round its own way, and the same way for the same seed.
  EXPECT_NE(round0, grid_order);
  EXPECT_NE(round0, round1);
  const std::string again = testing::fresh_dir("profiler_rounds_again");
  ProfilerOptions o2 = tiny_options(again);
  run_profile(o2, Catalog());
  const ProfileRun run2 = load_profile_run(again);
  for (size_t i = 0; i < run.samples.size(); ++i) {
    EXPECT_EQ(run2.samples[i].shape, run.samples[i].shape);
  }
}

TEST(Profiler, RefusesSamplesOfAnotherGrid) {
  const std::string dir = testing::fresh_dir("profiler_grid");
  const ProfilerOptions o = tiny_options(dir);
  run_profile(o, Catalog());
  // Rewrite the directory as a servesim whose grid listed other shapes would have left it.
  ProfileRun run = load_profile_run(dir);
  run.samples[0].seqs = {{3, 0, true}};
  {
    std::ofstream out(dir + "/samples.jsonl", std::ios::trunc);
    for (const ProfileSample& s : run.samples) out << sample_to_json_line(s) << '\n';
  }
  EXPECT_THAT([&] { run_profile(o, Catalog()); },
              ThrowsMessage<ConfigError>(HasSubstr("which this servesim's grid does not have")));
}

TEST(Profiler, GridSeparatesTheSmallBatchKernelFromTheBlockedOne) {
  const ProfileGridOptions full{.max_tokens = 512, .max_seqs = 8, .max_context = 512};
  bool at_small = false, past_small = false;
  for (const ProfileShape& s : make_profile_grid(full)) {
    if (s.size() != 1 || !s[0].prefill) continue;
    at_small |= s[0].new_tokens == static_cast<int>(kSmallBatchRows);
    past_small |= s[0].new_tokens == static_cast<int>(kSmallBatchRows) + 1;
  }
  EXPECT_TRUE(at_small);
  EXPECT_TRUE(past_small);
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
