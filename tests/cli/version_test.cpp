#include <gtest/gtest.h>

#include <cstdlib>

#include "tests/cli/cli_runner.h"

namespace servesim {
namespace {

using testing::CliResult;
using testing::run_servesim;

// SERVESIM_CPU_ISA for the commands run inside one scope.
class ScopedCpuIsa {
 public:
  explicit ScopedCpuIsa(const char* value) { ::setenv("SERVESIM_CPU_ISA", value, 1); }
  ~ScopedCpuIsa() { ::unsetenv("SERVESIM_CPU_ISA"); }
};

TEST(VersionFlag, NamesTheVersionAndTheKernelsInstructionSet) {
  const CliResult r = run_servesim("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("servesim 0.1.0 (git "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("CPU kernels x86-64"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("(built: "), std::string::npos) << r.out;
}

TEST(VersionFlag, TheBaselineCanBeForced) {
  ScopedCpuIsa isa("x86-64");
  const CliResult r = run_servesim("--version");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("CPU kernels x86-64 (built: "), std::string::npos) << r.out;
}

TEST(VersionFlag, AnUnknownForcedLevelIsOneLineErrorNotACrash) {
  ScopedCpuIsa isa("x86-64-v9");
  const CliResult r = run_servesim("--version");
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(r.err.rfind("error: SERVESIM_CPU_ISA=x86-64-v9 is not an instruction-set level", 0), 0u)
      << r.err;
  EXPECT_NE(r.err.find("use one of: x86-64"), std::string::npos) << r.err;
  EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
}

}  // namespace
}  // namespace servesim
