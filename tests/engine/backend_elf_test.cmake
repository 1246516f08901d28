# What the CUDA backend's split promises, read from the ELF files (ctest runs this with -P):
#   PROGRAM  (servesim): no CUDA runtime, cuBLAS or driver library among its DT_NEEDED;
#   MODULE   (servesim_cuda_backend.so, CUDA builds only): needs cuBLAS itself, and exports
#            exactly one defined dynamic symbol, the factory of engine/runtime/backend_module.h.
# Arguments: -DREADELF=... -DNM=... -DPROGRAM=... [-DMODULE=...]
function(needed_libraries file out)
  execute_process(COMMAND ${READELF} -d ${file} OUTPUT_VARIABLE dynamic RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "readelf -d ${file} failed (${rc})")
  endif()
  string(REGEX MATCHALL "\\(NEEDED\\)[^\n]*" lines "${dynamic}")
  set(${out} "${lines}" PARENT_SCOPE)
endfunction()

needed_libraries(${PROGRAM} program_needed)
if(program_needed MATCHES "libcudart|libcublas|libcuda\\.")
  message(FATAL_ERROR "${PROGRAM} links a CUDA library at start-up: ${program_needed}")
endif()

if(MODULE)
  needed_libraries(${MODULE} module_needed)
  if(NOT module_needed MATCHES "libcublas")
    message(FATAL_ERROR "${MODULE} does not need libcublas (${module_needed}): is it the CUDA module?")
  endif()
  execute_process(COMMAND ${NM} -D --defined-only --format=posix ${MODULE}
                  OUTPUT_VARIABLE symbols RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "nm -D ${MODULE} failed (${rc})")
  endif()
  string(REGEX MATCHALL "(^|\n)[^ \n]+" names "${symbols}")
  list(TRANSFORM names STRIP)
  # The linker's own markers are not code.
  list(REMOVE_ITEM names _init _fini _edata _end __bss_start)
  if(NOT names STREQUAL "servesim_backend_module")
    message(FATAL_ERROR "${MODULE} exports more than its factory: ${names}")
  endif()
endif()
