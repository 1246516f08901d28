// ParallelConfig's expert-parallel rules: EP = TP x DP, the refusals and their fixes.
#include "models/parallel_config.h"

#include <gtest/gtest.h>

#include <string>

#include "models/catalog.h"
#include "models/config_error.h"

namespace servesim {
namespace {

std::string error_of(const ParallelConfig& p, const ModelSpec& m) {
  try {
    p.validate(m);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "";
}

TEST(ParallelConfigExpertParallel, EpIsTpTimesDpOnlyWhenEnabled) {
  ParallelConfig p;
  p.tp = 4;
  p.dp = 2;
  EXPECT_EQ(p.ep(), 1);
  EXPECT_FALSE(p.lockstep());
  p.enable_expert_parallel = true;
  EXPECT_EQ(p.ep(), 8);
  EXPECT_TRUE(p.lockstep());
  p.dp = 1;
  EXPECT_EQ(p.ep(), 4);
  EXPECT_FALSE(p.lockstep());  // one replica: nothing to step together with
}

TEST(ParallelConfigExpertParallel, AcceptsExpertsThatDivide) {
  const Catalog catalog;
  ParallelConfig p;
  p.enable_expert_parallel = true;
  p.tp = 8;
  p.dp = 4;
  EXPECT_EQ(error_of(p, catalog.resolve_model("DeepSeek-V3")), "");  // 256 / 32
  p.tp = 2;
  p.dp = 4;
  EXPECT_EQ(error_of(p, catalog.resolve_model("Mixtral-8x7B")), "");  // 8 / 8
}

TEST(ParallelConfigExpertParallel, RefusesDenseModelsAndExpertsThatDoNotDivide) {
  const Catalog catalog;
  ParallelConfig p;
  p.enable_expert_parallel = true;
  const std::string dense = error_of(p, catalog.resolve_model("Llama-3.1-8B"));
  EXPECT_NE(dense.find("needs a mixture-of-experts model"), std::string::npos) << dense;
  EXPECT_NE(dense.find("drop the flag"), std::string::npos) << dense;
  p.tp = 4;
  p.dp = 4;
  const std::string split = error_of(p, catalog.resolve_model("Mixtral-8x7B"));
  EXPECT_NE(split.find("EP = TP 4 x DP 4 = 16 does not divide the 8 experts"), std::string::npos)
      << split;
  EXPECT_NE(split.find("among 2, 4, 8"), std::string::npos) << split;
  EXPECT_EQ(split.find('\n'), std::string::npos);
}

TEST(ParallelConfigExpertParallel, RefusesAZipfExponentOutOfRange) {
  const Catalog catalog;
  ParallelConfig p;
  p.expert_zipf_exponent = -0.5;
  EXPECT_NE(error_of(p, catalog.resolve_model("Mixtral-8x7B")).find("expert_zipf_exponent"),
            std::string::npos);
  p.expert_zipf_exponent = 4.5;
  EXPECT_NE(error_of(p, catalog.resolve_model("Mixtral-8x7B")).find("[0, 4]"), std::string::npos);
}

}  // namespace
}  // namespace servesim
