# A topology with errors: treeduce-gen exits non-zero, names file:line:col and
# what it expected, and writes no output.  -DGEN -DDATA -DWORK
file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND "${GEN}" "${DATA}/bad_cluster.topo" -o "${WORK}/out" --dot "${WORK}/ring.dot"
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "treeduce-gen accepted a bad topology")
endif()
if(NOT err MATCHES "bad_cluster.topo:4:[0-9]+: error: expected ")
  message(FATAL_ERROR "no located 'expected' message:\n${err}")
endif()
if(NOT err MATCHES "bad_cluster.topo:[0-9]+:[0-9]+: error: unknown switch 'sw9'" AND
   NOT err MATCHES "bad_cluster.topo:[0-9]+:[0-9]+: error: .*sw9")
  message(STATUS "(second error not reported after recovery)\n${err}")
endif()
if(EXISTS "${WORK}/out" OR EXISTS "${WORK}/ring.dot")
  message(FATAL_ERROR "treeduce-gen wrote output for a bad topology")
endif()
message(STATUS "rejected as expected:\n${err}")
