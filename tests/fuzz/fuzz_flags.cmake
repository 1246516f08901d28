# Flags of a SERVESIM_FUZZ build, included by the top-level CMakeLists.txt before any library:
# every library is instrumented for libFuzzer's coverage (fuzzer-no-link) and built with
# AddressSanitizer and UndefinedBehaviorSanitizer, so a bug in a parser's callee is found too;
# the targets in this folder add libFuzzer's main (-fsanitize=fuzzer). UBSan does not recover:
# undefined behaviour aborts the input, which libFuzzer then reports as a finding.
if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang" OR NOT CMAKE_CXX_COMPILER_VERSION VERSION_GREATER_EQUAL 16)
  message(FATAL_ERROR "servesim: SERVESIM_FUZZ needs clang++-16 (apt-get install clang-16 "
                      "libclang-rt-16-dev); configure with CC=clang-16 CXX=clang++-16")
endif()
if(SERVESIM_CUDA OR SERVESIM_GUI OR SERVESIM_MPI)
  message(FATAL_ERROR "servesim: SERVESIM_FUZZ builds the parsers only: configure with "
                      "-DSERVESIM_CUDA=OFF -DSERVESIM_GUI=OFF -DSERVESIM_MPI=OFF")
endif()
set(servesim_fuzz_sanitizers -fsanitize=fuzzer-no-link,address,undefined
    -fno-sanitize-recover=all -fno-omit-frame-pointer)
add_compile_options("$<$<COMPILE_LANGUAGE:CXX>:${servesim_fuzz_sanitizers}>")
add_link_options(-fsanitize=address,undefined)
