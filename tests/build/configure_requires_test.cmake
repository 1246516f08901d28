# A component that is on by default and whose package is missing stops the configure with the
# one line that names the Debian packages and the switch that turns it off, instead of being
# dropped in silence. -DSOURCE_DIR=... -DWORK_DIR=... -DPACKAGE=Qt6 -DEXPECT="apt-get ..."
file(REMOVE_RECURSE ${WORK_DIR})
execute_process(
  COMMAND ${CMAKE_COMMAND} -S ${SOURCE_DIR} -B ${WORK_DIR} -G Ninja -DSERVESIM_CUDA=OFF
          -DCMAKE_DISABLE_FIND_PACKAGE_${PACKAGE}=ON
  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
file(REMOVE_RECURSE ${WORK_DIR})
if(rc EQUAL 0)
  message(FATAL_ERROR "configure without ${PACKAGE} succeeded; it must fail")
endif()
string(REGEX MATCH "servesim: ${PACKAGE} not found: [^\n]*" line "${err}")
if(NOT line)
  message(FATAL_ERROR "no one-line servesim message for ${PACKAGE}:\n${err}")
endif()
string(FIND "${line}" "${EXPECT}" at)
if(at EQUAL -1)
  message(FATAL_ERROR "'${line}' does not say '${EXPECT}'")
endif()
message(STATUS "${line}")
