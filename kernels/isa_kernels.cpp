#include "kernels/isa_kernels.h"

#include <array>
#include <functional>

namespace servesim {

std::span<const IsaKernels> built_isa_kernels() {
#ifdef SERVESIM_NATIVE_CPU_KERNELS
  static constexpr std::array<IsaKernels, 1> kBuilt = {
      IsaKernels{CpuIsa::kNative, &isa_native::linear, &isa_native::paged_attention}};
#else
  static constexpr std::array<IsaKernels, 3> kBuilt = {
      IsaKernels{CpuIsa::kX86_64, &isa_x86_64::linear, &isa_x86_64::paged_attention},
      IsaKernels{CpuIsa::kX86_64V3, &isa_x86_64_v3::linear, &isa_x86_64_v3::paged_attention},
      IsaKernels{CpuIsa::kX86_64V4, &isa_x86_64_v4::linear, &isa_x86_64_v4::paged_attention}};
#endif
  return kBuilt;
}

const IsaKernels& active_isa_kernels() {
  static const IsaKernels& active =
      [] {
        const CpuIsa isa = active_cpu_isa();
        for (const IsaKernels& k : built_isa_kernels()) {
          if (k.isa == isa) return std::cref(k);
        }
        return std::cref(built_isa_kernels().front());  // active_cpu_isa() picks a built level
      }()
          .get();
  return active;
}

}  // namespace servesim
