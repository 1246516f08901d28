#include "kernels/cpu_isa.h"

#include <gtest/gtest.h>

#include <cstdlib>

#include "kernels/isa_kernels.h"

namespace servesim {
namespace {

TEST(CpuIsa, NamesAreTheCompilerSpellings) {
  EXPECT_STREQ(cpu_isa_name(CpuIsa::kX86_64), "x86-64");
  EXPECT_STREQ(cpu_isa_name(CpuIsa::kX86_64V3), "x86-64-v3");
  EXPECT_STREQ(cpu_isa_name(CpuIsa::kX86_64V4), "x86-64-v4");
  EXPECT_STREQ(cpu_isa_name(CpuIsa::kNative), "native");
}

TEST(CpuIsa, LevelsAreNestedAsTheirDefinitionsAre) {
  EXPECT_TRUE(cpu_supports(CpuIsa::kX86_64));
  if (cpu_supports(CpuIsa::kX86_64V4)) {
    EXPECT_TRUE(cpu_supports(CpuIsa::kX86_64V3));
  }
}

// Without SERVESIM_CPU_ISA, dispatch runs the highest built copy this CPU supports.
TEST(CpuIsa, ActiveIsTheHighestBuiltLevelThisCpuRuns) {
  if (std::getenv("SERVESIM_CPU_ISA") != nullptr) GTEST_SKIP() << "SERVESIM_CPU_ISA is set";
  CpuIsa best = built_cpu_isas().front();
  for (CpuIsa isa : built_cpu_isas()) {
    if (cpu_supports(isa)) best = isa;
  }
  EXPECT_EQ(active_cpu_isa(), best);
  EXPECT_EQ(active_isa_kernels().isa, best);
  EXPECT_EQ(cpu_isa_summary().rfind(cpu_isa_name(best), 0), 0u) << cpu_isa_summary();
}

TEST(CpuIsa, TheTableHoldsEveryBuiltLevelOnce) {
  const std::vector<CpuIsa> built = built_cpu_isas();
  ASSERT_EQ(built.size(), built_isa_kernels().size());
  for (size_t i = 0; i < built.size(); ++i) {
    EXPECT_EQ(built_isa_kernels()[i].isa, built[i]);
    EXPECT_NE(built_isa_kernels()[i].linear, nullptr);
    EXPECT_NE(built_isa_kernels()[i].paged_attention, nullptr);
  }
}

}  // namespace
}  // namespace servesim
