#include "kernels/cpu_isa.h"

#include <cstdlib>
#include <stdexcept>

#include "kernels/isa_kernels.h"

namespace servesim {
namespace {

CpuIsa pick_cpu_isa() {
  const std::vector<CpuIsa> built = built_cpu_isas();
  const char* forced = std::getenv("SERVESIM_CPU_ISA");
  if (forced == nullptr || *forced == '\0') {
    CpuIsa best = built.front();
    for (CpuIsa isa : built) {
      if (cpu_supports(isa)) best = isa;
    }
    return best;
  }
  std::string runnable;
  bool known = false, built_here = false;
  for (CpuIsa isa : {CpuIsa::kX86_64, CpuIsa::kX86_64V3, CpuIsa::kX86_64V4, CpuIsa::kNative}) {
    if (cpu_isa_name(isa) == std::string(forced)) known = true;
  }
  for (CpuIsa isa : built) {
    const bool named = cpu_isa_name(isa) == std::string(forced);
    built_here = built_here || named;
    if (!cpu_supports(isa)) continue;
    if (named) return isa;
    runnable += runnable.empty() ? "" : ", ";
    runnable += cpu_isa_name(isa);
  }
  const char* why = !known        ? "is not an instruction-set level"
                    : !built_here ? "is not built into this binary"
                                  : "needs instructions this CPU lacks";
  throw std::runtime_error("SERVESIM_CPU_ISA=" + std::string(forced) + " " + why +
                           "; use one of: " + runnable + " (or unset it)");
}

}  // namespace

const char* cpu_isa_name(CpuIsa isa) {
  switch (isa) {
    case CpuIsa::kX86_64:
      return "x86-64";
    case CpuIsa::kX86_64V3:
      return "x86-64-v3";
    case CpuIsa::kX86_64V4:
      return "x86-64-v4";
    case CpuIsa::kNative:
      return "native";
  }
  return "unknown";
}

std::vector<CpuIsa> built_cpu_isas() {
  std::vector<CpuIsa> built;
  for (const IsaKernels& k : built_isa_kernels()) built.push_back(k.isa);
  return built;
}

bool cpu_supports(CpuIsa isa) {
  // libgcc's checks include XGETBV, so a CPU whose OS does not save the AVX-512 registers
  // counts as lacking them.
  __builtin_cpu_init();
  switch (isa) {
    case CpuIsa::kX86_64:
    case CpuIsa::kNative:  // built for this very machine
      return true;
#if defined(__clang__)
    // clang before 19 (Debian 12's 16 builds the fuzz targets) knows no level names: the
    // levels' features instead, those it can name (F16C, MOVBE and LZCNT come with every CPU
    // that has AVX2, BMI1/2 and FMA).
    case CpuIsa::kX86_64V3:
      return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("bmi") &&
             __builtin_cpu_supports("bmi2") && __builtin_cpu_supports("fma");
    case CpuIsa::kX86_64V4:
      return cpu_supports(CpuIsa::kX86_64V3) && __builtin_cpu_supports("avx512f") &&
             __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512cd") &&
             __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl");
#else
    case CpuIsa::kX86_64V3:
      return __builtin_cpu_supports("x86-64-v3");
    case CpuIsa::kX86_64V4:
      return __builtin_cpu_supports("x86-64-v4");
#endif
  }
  return false;
}

CpuIsa active_cpu_isa() {
  static const CpuIsa active = pick_cpu_isa();
  return active;
}

std::string cpu_isa_summary() {
  std::string built;
  for (CpuIsa isa : built_cpu_isas()) {
    built += built.empty() ? "" : ", ";
    built += cpu_isa_name(isa);
  }
  return std::string(cpu_isa_name(active_cpu_isa())) + " (built: " + built + ")";
}

}  // namespace servesim
