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

# servesim_add_test_suite(NAME LIBS lib... [LABELS label...]): every *_test.cpp in the folder.
function(servesim_add_test_suite name)
  cmake_parse_arguments(ARG "" "" "LIBS;LABELS" ${ARGN})
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
  gtest_discover_tests(${name} DISCOVERY_TIMEOUT 120
    PROPERTIES ENVIRONMENT "SERVESIM_CONFIG_DIR=${PROJECT_SOURCE_DIR}/configs")
  # Labels are a list, which gtest_discover_tests' PROPERTIES would flatten into separate
  # arguments (only the first label would stick), so ctest sets them from a file it reads
  # after the discovered tests (their names are in ${name}_TESTS).
  set(labels unit ${ARG_LABELS})
  set(labels_file ${CMAKE_CURRENT_BINARY_DIR}/${name}_labels.cmake)
  file(WRITE ${labels_file} "if(${name}_TESTS)\n"
    "  set_tests_properties(\${${name}_TESTS} PROPERTIES LABELS \"${labels}\")\n"
    "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${labels_file})
endfunction()
