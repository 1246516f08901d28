# The 2-rank MPI test: `servesim plan` and `servesim sweep` alone and under `mpirun -np 2`
# must print (and plan write) the same bytes, and a bad input must still be one "error:" line
# (rank 0's) with exit status 2.
# Run by ctest as: cmake -DSERVESIM=... -DMPIEXEC=... -DSOURCE_DIR=... -DWORK_DIR=... -P this.
# --allow-run-as-root: CI runs as root; --oversubscribe: 2 ranks may exceed the cores.
set(mpirun ${MPIEXEC} --allow-run-as-root --oversubscribe -np 2)
# 20 candidates: more than one search wave of 16, so ranks must agree on the cost bound.
set(plan plan ${SOURCE_DIR}/configs/scenarios/quickstart.json --target-qps 20
    --gpus A100-80GB,H100,L40S,L4,B200 --tp 1,2,4,8 --requests 150
    --slo ttft:p99=0.5 --slo tpot:p99=50ms --threads 1)
file(REMOVE_RECURSE ${WORK_DIR})

function(run name)
  execute_process(COMMAND ${ARGN} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
  set(${name}_out "${out}" PARENT_SCOPE)
  set(${name}_err "${err}" PARENT_SCOPE)
  set(${name}_rc "${rc}" PARENT_SCOPE)
endfunction()

function(expect_same what a b)
  if(NOT "${a}" STREQUAL "${b}")
    message(FATAL_ERROR "${what} differs between 1 process and 2 ranks:\n--- 1 process\n${a}\n--- 2 ranks\n${b}")
  endif()
endfunction()

foreach(format table json)
  set(extra)
  if(format STREQUAL "json")
    set(extra --json)
  endif()
  run(one ${SERVESIM} ${plan} ${extra} --out ${WORK_DIR}/one_${format})
  run(two ${mpirun} ${SERVESIM} ${plan} ${extra} --out ${WORK_DIR}/two_${format})
  if(NOT one_rc EQUAL 0)
    message(FATAL_ERROR "1 process exited ${one_rc}: ${one_err}")
  endif()
  expect_same("exit status (${format})" "${one_rc}" "${two_rc}")
  expect_same("stdout (${format})" "${one_out}" "${two_out}")
  foreach(f plan.csv plan.json pareto.csv)
    file(READ ${WORK_DIR}/one_${format}/${f} a)
    file(READ ${WORK_DIR}/two_${format}/${f} b)
    expect_same("${f}" "${a}" "${b}")
  endforeach()
endforeach()

# A sweep with an unfit point (the 13B model on a T4): its reason travels like a result.
set(sweep sweep ${SOURCE_DIR}/configs/scenarios/quickstart.json --vary engine.max_num_seqs=8,64
    --vary gpu=A100-80GB,T4,H100 --set workload.num_requests=200 --set model=Llama-2-13B
    --threads 1)
foreach(format --json --csv)
  run(one ${SERVESIM} ${sweep} ${format})
  run(two ${mpirun} ${SERVESIM} ${sweep} ${format})
  if(NOT one_rc EQUAL 0)
    message(FATAL_ERROR "sweep, 1 process exited ${one_rc}: ${one_err}")
  endif()
  expect_same("sweep exit status (${format})" "${one_rc}" "${two_rc}")
  expect_same("sweep stdout (${format})" "${one_out}" "${two_out}")
endforeach()

run(bad ${mpirun} ${SERVESIM} ${plan} --slo latency:p99=1)
string(REGEX MATCHALL "error: " errors "${bad_err}")
list(LENGTH errors error_lines)
if(NOT bad_rc EQUAL 2 OR NOT error_lines EQUAL 1 OR NOT bad_out STREQUAL "")
  message(FATAL_ERROR "a bad input under 2 ranks: exit ${bad_rc}, ${error_lines} error lines, "
                      "stdout '${bad_out}', stderr:\n${bad_err}")
endif()
message(STATUS "plan and sweep: 1 process and 2 ranks agree byte for byte")
