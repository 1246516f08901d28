// CpuIsa: the x86-64 instruction-set levels the hot CPU kernels (linear, paged_attention) are
// built for, and which one this process runs them with. The default build is portable: every
// translation unit targets baseline x86-64, and the two kernels are compiled a further time
// for x86-64-v3 (AVX2, FMA) and x86-64-v4 (AVX-512), picked once at start-up from what the
// CPU and the operating system support (CMake's SERVESIM_NATIVE_CPU_KERNELS builds one
// -march=native copy instead, reported as "native").
//
// The choice can be forced with the environment variable SERVESIM_CPU_ISA (x86-64,
// x86-64-v3, x86-64-v4), e.g. to measure what dispatch buys; a level the CPU lacks, or one
// this build does not contain, is an error rather than a crash.
//
// Thread-safety: active_cpu_isa() decides once (a function-local static) and is then a
// read; safe from any thread.
#pragma once

#include <string>
#include <vector>

namespace servesim {

enum class CpuIsa {
  kX86_64,    // SSE2: every x86-64 CPU
  kX86_64V3,  // AVX2 + FMA + BMI2 (Intel Haswell, AMD Zen and later)
  kX86_64V4,  // AVX-512 F/BW/CD/DQ/VL (Intel Skylake-SP, AMD Zen 4 and later)
  kNative,    // one copy for the build machine (SERVESIM_NATIVE_CPU_KERNELS=ON)
};

// "x86-64", "x86-64-v3", "x86-64-v4" or "native".
const char* cpu_isa_name(CpuIsa isa);

// The levels this binary carries kernels for, lowest first.
std::vector<CpuIsa> built_cpu_isas();

// Whether this CPU (and OS, for the AVX register state) can run `isa`'s kernels.
bool cpu_supports(CpuIsa isa);

// The highest built level this CPU supports, or SERVESIM_CPU_ISA's. THROWS
// std::runtime_error naming the variable and the levels this CPU can run when
// SERVESIM_CPU_ISA names an unknown, unbuilt or unsupported level.
CpuIsa active_cpu_isa();

// "x86-64-v3 (built: x86-64, x86-64-v3, x86-64-v4)": what --version and engine bench print.
std::string cpu_isa_summary();

}  // namespace servesim
