# Helpers shared by the per-folder CMake files: one static library per folder, one
# GoogleTest binary per test folder, one executable per benchmark source.
include(GoogleTest)

# servesim_add_library(NAME DEPS dep...): every .cpp beside the CMakeLists.txt.
function(servesim_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  if(srcs)
    add_library(${name} STATIC ${srcs})
    target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} PUBLIC ${ARG_DEPS})
  else()
    # A folder whose first sources have not landed yet still provides its target name.
    add_library(${name} INTERFACE)
    target_include_directories(${name} INTERFACE ${PROJECT_SOURCE_DIR})
    target_link_libraries(${name} INTERFACE ${ARG_DEPS})
  endif()
endfunction()

# servesim_add_test_suite(NAME LIBS lib... [LABELS label...] [SERIAL] [TIMEOUT seconds]): every
# *_test.cpp in the folder. SERIAL tests run alone (they time the machine and must not share
# it). TIMEOUT bounds each test below the preset's limit, so a hung one fails in that time.
function(servesim_add_test_suite name)
  cmake_parse_arguments(ARG "SERIAL" "TIMEOUT" "LIBS;LABELS" ${ARGN})
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_test.cpp)
  file(GLOB helpers CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*_runner.cpp)
  list(APPEND srcs ${helpers})
  if(NOT srcs)
    return()
  endif()
  add_executable(${name} ${srcs})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    SERVESIM_SOURCE_DIR="${PROJECT_SOURCE_DIR}"
    SERVESIM_REFERENCE_DIR="${PROJECT_SOURCE_DIR}/../shared/reference")
  set(labels unit ${ARG_LABELS})
  set(properties "")
  if(ARG_SERIAL)
    list(APPEND properties RUN_SERIAL TRUE)
  endif()
  if(ARG_TIMEOUT)
    list(APPEND properties TIMEOUT ${ARG_TIMEOUT})
  endif()
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 120
    PROPERTIES ${properties}
    ENVIRONMENT "SERVESIM_CONFIG_DIR=${PROJECT_SOURCE_DIR}/configs")
  # Labels are set after discovery, by name list: gtest_discover_tests' PROPERTIES would split
  # a list of labels into separate properties.
  set(label_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake)
  file(WRITE ${label_file}
    "if(${name}_TESTS)\n  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${labels}\")\nendif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${label_file})
endfunction()

# servesim_silence_gcc12_avx512_false_positive(TARGET MARCH): GCC 12's AVX-512 intrinsics
# initialise their "undefined" vectors from themselves (`__m512 __Y = __Y;` in
# avx512fintrin.h), and once Eigen's AVX-512 packet code (ptranspose, pfirst, predux) is
# inlined into a project translation unit, -Wmaybe-uninitialized / -Wuninitialized report
# that line there, where -isystem cannot hide it (GCC bug 105593, fixed in GCC 13). Only for
# the targets that compile Eigen with AVX-512, only for GCC before 13.
function(servesim_silence_gcc12_avx512_false_positive target march)
  if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13
     AND march MATCHES "^(x86-64-v4|sapphirerapids|skylake-avx512|icelake-server|znver4|native)$")
    target_compile_options(${target} PRIVATE -Wno-maybe-uninitialized -Wno-uninitialized)
  endif()
endfunction()

# servesim_add_isa_kernels(LIBRARY NAMESPACE [FLAG...]): compiles kernels/isa/*.cpp into
# namespace servesim::NAMESPACE with FLAGs (e.g. -march=x86-64-v4) and adds them to LIBRARY
# as one object whose only global symbols are that namespace's. The copies are partially
# linked with their section groups resolved (--force-group-allocation) and then every other
# symbol is made local, so the Eigen and standard-library functions inlined into an AVX-512
# copy stay private to it: the final link cannot pick them for baseline code, which would
# then fault on CPUs without AVX-512.
function(servesim_add_isa_kernels library ns)
  set(flags ${ARGN})
  # --force-group-allocation is GNU ld's: clang's default linker (lld, the fuzz build's) has no
  # such option, so the partial link uses GNU ld whichever compiler built the objects.
  find_program(SERVESIM_RELOCATABLE_LD NAMES ld.bfd ld REQUIRED)
  set(objs ${library}_${ns}_objs)
  file(GLOB srcs CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/isa/*.cpp)
  add_library(${objs} OBJECT ${srcs})
  target_include_directories(${objs} PRIVATE ${PROJECT_SOURCE_DIR})
  target_link_libraries(${objs} PRIVATE Eigen3::Eigen Threads::Threads)
  target_compile_definitions(${objs} PRIVATE SERVESIM_ISA_NS=${ns}
    $<TARGET_PROPERTY:${library},INTERFACE_COMPILE_DEFINITIONS>)
  # Function-local statics of inline functions (Eigen's cache sizes) would otherwise be
  # STB_GNU_UNIQUE under GCC, a binding objcopy cannot make local; as weak symbols they can be.
  # Clang never emits that binding (and has no such flag): the fuzz build compiles with it.
  target_compile_options(${objs} PRIVATE ${flags} $<$<CXX_COMPILER_ID:GNU>:-fno-gnu-unique>)
  set(march "")
  foreach(flag ${flags})
    if(flag MATCHES "^-march=(.*)$")
      set(march ${CMAKE_MATCH_1})
    endif()
  endforeach()
  servesim_silence_gcc12_avx512_false_positive(${objs} "${march}")
  # _ZN8servesim<len><ns>: the mangled prefix of everything in servesim::<ns>.
  string(LENGTH ${ns} ns_length)
  set(prefix "_ZN8servesim${ns_length}${ns}")
  set(merged ${CMAKE_CURRENT_BINARY_DIR}/${ns}_kernels.o)
  add_custom_command(OUTPUT ${merged}
    COMMAND ${SERVESIM_RELOCATABLE_LD} -r --force-group-allocation -o ${merged}
            $<TARGET_OBJECTS:${objs}>
    COMMAND ${CMAKE_OBJCOPY} --wildcard --keep-global-symbol=${prefix}* ${merged}
    DEPENDS $<TARGET_OBJECTS:${objs}> ${objs}
    COMMAND_EXPAND_LISTS
    COMMENT "Linking the ${ns} kernels with only servesim::${ns} global")
  set_source_files_properties(${merged} PROPERTIES EXTERNAL_OBJECT TRUE GENERATED TRUE)
  target_sources(${library} PRIVATE ${merged})
endfunction()

# servesim_require_package(NAME [OPTION VAR] APT "debian packages" [ARGS find_package args...]):
# find_package(NAME ARGS...), and when it is not found, stop with one line that names the
# Debian packages to install and, for an optional component, the switch that turns it off.
# A macro, so the package's variables (versions, directories) reach the caller.
macro(servesim_require_package name)
  cmake_parse_arguments(_srp "" "OPTION;APT" "ARGS" ${ARGN})
  find_package(${name} ${_srp_ARGS} QUIET)
  if(NOT ${name}_FOUND)
    set(_srp_off "")
    if(_srp_OPTION)
      set(_srp_off ", or configure with -D${_srp_OPTION}=OFF")
    endif()
    # NOTICE prints the line as it is (FATAL_ERROR re-wraps it); scripts/build.sh shows it.
    message(NOTICE "servesim: ${name} not found: run scripts/install_deps.sh (apt-get install "
                   "${_srp_APT})${_srp_off}")
    message(FATAL_ERROR "servesim: ${name} not found (see the line above)")
  endif()
endmacro()

# servesim_print_summary(): the one line that says what this configure builds, e.g.
# "servesim: CUDA on (nvcc 13.0, sm_80;90) · GUI on (Qt 6.4.2) · MPI on (Open MPI 4.1) ·
# kernels x86-64+v3+v4".
function(servesim_print_summary)
  if(SERVESIM_CUDA)
    string(REGEX MATCH "^[0-9]+\\.[0-9]+" nvcc_version "${CMAKE_CUDA_COMPILER_VERSION}")
    set(cuda "CUDA on (nvcc ${nvcc_version}, sm_${CMAKE_CUDA_ARCHITECTURES})")
  else()
    set(cuda "CUDA off")
  endif()
  if(SERVESIM_GUI)
    set(gui "GUI on (Qt ${Qt6_VERSION})")
  else()
    set(gui "GUI off")
  endif()
  if(SERVESIM_MPI)
    string(REGEX MATCH "Open MPI v[0-9]+\\.[0-9]+|MPICH Version:[ \t]*[0-9.]+" mpi_library
           "${MPI_C_LIBRARY_VERSION_STRING}")
    string(REPLACE "Open MPI v" "Open MPI " mpi_library "${mpi_library}")
    if(NOT mpi_library)
      set(mpi_library "MPI ${MPI_C_VERSION}")
    endif()
    set(mpi "MPI on (${mpi_library})")
  else()
    set(mpi "MPI off")
  endif()
  set(tests "tests off")
  if(SERVESIM_BUILD_TESTS)
    set(tests "tests on")
  endif()
  set(bench "benchmarks off")
  if(SERVESIM_BUILD_BENCH)
    set(bench "benchmarks on")
  endif()
  message(STATUS "servesim: ${cuda} · ${gui} · ${mpi} · kernels ${SERVESIM_KERNEL_ISAS} · "
                 "${tests} · ${bench}")
endfunction()
