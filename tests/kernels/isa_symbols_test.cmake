# The ISA copies of the kernels export nothing but their own namespace: a global symbol of any
# other name (an Eigen or standard-library function compiled for AVX-512) could be picked by
# the final link for baseline code and fault on a CPU without AVX-512.
# -DNM=... -DOBJECT=<ns>_kernels.o -DNAMESPACE=<ns>
execute_process(COMMAND ${NM} --defined-only --extern-only ${OBJECT}
                OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "nm failed on ${OBJECT}")
endif()
string(LENGTH ${NAMESPACE} length)
set(prefix "_ZN8servesim${length}${NAMESPACE}")
string(REPLACE "\n" ";" lines "${symbols}")
set(exported 0)
foreach(line ${lines})
  string(REGEX REPLACE "^[0-9a-fA-F]* *[A-Za-z] " "" name "${line}")
  if(name STREQUAL "")
    continue()
  endif()
  string(FIND "${name}" "${prefix}" at)
  if(NOT at EQUAL 0)
    message(FATAL_ERROR "${OBJECT} exports ${name}, which is not in servesim::${NAMESPACE}")
  endif()
  math(EXPR exported "${exported} + 1")
endforeach()
if(exported LESS 2)
  message(FATAL_ERROR "${OBJECT} exports ${exported} symbols; expected linear and paged_attention")
endif()
message(STATUS "${OBJECT}: ${exported} symbols, all in servesim::${NAMESPACE}")
