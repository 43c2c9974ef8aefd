# treeduce-gen --wisdom (tests/data/buildhost.wisdom, measured by hand on
# topologies/buildhost.xml).  -DGEN -DSRC -DWORK -DCASE, and for CASE
# generated -DFILE (a file treeduce_generate() wrote with the wisdom):
#   digest     --digest prints the digest the wisdom carries;
#   tuned      the measured ranges become the tuned tables, with their times
#              in the comments and the wisdom's name and sha256 in the banner;
#   generated  the same tables in FILE;
#   stale      a wisdom of another machine: refused with the exact message,
#              exit 1, nothing written;
#   unverified an algorithm of the wisdom that fails verification: refused at
#              its line, nothing written;
#   explain    --explain's lines for the measured ranges;
#   bounds     a wisdom past the size cap (/dev/zero) refused as the topology
#              readers refuse one, nothing written.
set(topo "${SRC}/topologies/buildhost.xml")
set(wisdom "${SRC}/tests/data/buildhost.wisdom")
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(expect_lines text)
  foreach(line IN LISTS ARGN)
    string(FIND "${text}" "${line}" at)
    if(at LESS 0)
      message(FATAL_ERROR "missing:\n${line}\nin:\n${text}")
    endif()
  endforeach()
endfunction()

# The tables a generated file must hold for buildhost.wisdom.
function(expect_tables file)
  file(READ "${file}" c)
  expect_lines("${c}"
    "/* allreduce, 1 node x 2 (line 12):
 *   from 0 B: shm:rx:2 1.25 us, runner-up mpi 1.5 us
 *   from 4096 B: shm 20.5 us, runner-up shm:tree:2 22 us
 *   from 1048576 B: mpi 900 us, runner-up shm 950.2 us
 */
static const trd_size_choice tuned_0[3] = {
    {.below = 4096, .alg = \"shm:rx\", .params = \"2\"},
    {.below = 1048576, .alg = \"shm\", .params = \"\"},
    {.below = SIZE_MAX, .alg = \"mpi\", .params = \"\"},
};"
    "static const trd_size_choice tuned_1[1] = {
    {.below = SIZE_MAX, .alg = \"binomial\", .params = \"\"},
};"
    "static const trd_tuned_shape tuned[3] = {
    {.coll = TRD_COLL_ALLREDUCE, .nnodes = 1, .ppn = 2, .choices = tuned_0, .nchoices = 3},
    {.coll = TRD_COLL_BCAST, .nnodes = 1, .ppn = 2, .choices = tuned_1, .nchoices = 1},
    {.coll = TRD_COLL_REDUCE_SCATTER_BLOCK, .nnodes = 1, .ppn = 2, .choices = tuned_2, .nchoices = 1},
};"
    "    .tuned = tuned,
    .ntuned = 3,
    .tuned_mpi = \"MPICH Version:\\0114.0 \\\"test\\\"\",
};")
endfunction()

if(CASE STREQUAL "digest")
  execute_process(COMMAND "${GEN}" --digest "${topo}" RESULT_VARIABLE rc OUTPUT_VARIABLE out)
  file(STRINGS "${wisdom}" line REGEX "^digest ")
  if(NOT rc EQUAL 0 OR NOT "digest ${out}" STREQUAL "${line}\n")
    message(FATAL_ERROR "--digest: rc ${rc}, '${out}', the wisdom has '${line}'")
  endif()
elseif(CASE STREQUAL "tuned")
  execute_process(COMMAND "${GEN}" "${topo}" --wisdom "${wisdom}" -o "${WORK}/out"
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "treeduce-gen --wisdom failed (${rc}):\n${err}")
  endif()
  expect_tables("${WORK}/out/trd_vm.c")
  file(SHA256 "${wisdom}" sha)
  file(READ "${WORK}/out/trd_vm.c" c)
  expect_lines("${c}" " * wisdom:  ${wisdom}\n * sha256:  ${sha}\n */")
  # the same input without --wisdom: no tuned table
  execute_process(COMMAND "${GEN}" "${topo}" -o "${WORK}/plain" RESULT_VARIABLE rc)
  file(READ "${WORK}/plain/trd_vm.c" plain)
  if(NOT rc EQUAL 0 OR plain MATCHES "trd_tuned_shape|\\.tuned =| \\* wisdom:")
    message(FATAL_ERROR "without --wisdom: rc ${rc}, or tuned tables:\n${plain}")
  endif()
elseif(CASE STREQUAL "generated")
  expect_tables("${FILE}")
elseif(CASE STREQUAL "stale")
  execute_process(COMMAND "${GEN}" "${SRC}/topologies/ethernet32.topo" --wisdom "${wisdom}"
                          -o "${WORK}/out" --dot "${WORK}/ring.dot"
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
  execute_process(COMMAND "${GEN}" --digest "${SRC}/topologies/ethernet32.topo" OUTPUT_VARIABLE other)
  string(SUBSTRING "${other}" 0 8 other)
  set(msg "${wisdom}:5:8: error: wisdom measured on machine 'vm' (digest aa638896...), this description is 'ethernet32' (digest ${other}...)\n")
  string(FIND "${err}" "${msg}" at)
  string(FIND "${err}" "treeduce-gen: 1 error; nothing written\n" end)
  if(NOT rc EQUAL 1 OR NOT at EQUAL 0 OR end LESS 0)
    message(FATAL_ERROR "stale wisdom: rc ${rc}, expected\n${msg}got\n${err}")
  endif()
  if(EXISTS "${WORK}/out" OR EXISTS "${WORK}/ring.dot")
    message(FATAL_ERROR "treeduce-gen wrote output with a stale wisdom")
  endif()
elseif(CASE STREQUAL "unverified")
  execute_process(COMMAND "${GEN}" "${topo}" --wisdom "${wisdom}" --break-schedule shm:0:1
                          -o "${WORK}/out"
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  string(FIND "${err}" "${wisdom}:13:1: error: the shm schedule for 1 node x 2 ranks (3 elements, shared memory) fails verification: rank 1, op 5" at)
  if(NOT rc EQUAL 1 OR NOT at EQUAL 0)
    message(FATAL_ERROR "unverified wisdom: rc ${rc}:\n${err}")
  endif()
  if(EXISTS "${WORK}/out")
    message(FATAL_ERROR "treeduce-gen wrote output with an unverified wisdom")
  endif()
elseif(CASE STREQUAL "explain")
  execute_process(COMMAND "${GEN}" "${topo}" --wisdom "${wisdom}" --explain
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "--explain --wisdom failed (${rc}):\n${err}")
  endif()
  expect_lines("${out}"
    "measured size ranges, used in place of the model's (wisdom ${wisdom}:
  machine vm, 2026-11-27T00:30:00Z, 2 ranks,
  MPI MPICH Version: 4.0 \"test\"):"
    "  allreduce, 1 node x 2 ranks (line 12):
    0 B .. 4 KiB (at 180 B): measured shm:rx:2 1.25 us, runner-up mpi 1.5 us
      model: shm:rx:2 "
    "    1 MiB and up (at 4 MiB): measured mpi 900 us, runner-up shm 950.2 us
      model: none for the MPI library; picks "
    "  bcast, 1 node x 2 ranks (line 15):
    0 B and up (at 32 B): measured binomial 2 us, runner-up mpi 2.5 us
      model: binomial "
    "  reduce_scatter_block, 1 node x 2 ranks (line 16):
    0 B and up (at 32 B): measured mpi 3 us
      model: none for the MPI library; picks "
    "  the model fills (every size of a measured shape comes from the wisdom):
    allreduce: every shape but 1x2
    reduce_scatter_block: every shape but 1x2
    allgather: every shape
    reduce: every shape
    bcast: every shape but 1x2
")
  # every range has its model line, with a ratio where the model times it
  if(NOT out MATCHES "model: shm:rx:2 [0-9.e+-]+ us \\([0-9.]+ x measured\\); picks [a-z:]+: (agrees|differs)\n")
    message(FATAL_ERROR "no model time and pick for the first range:\n${out}")
  endif()
  if(NOT out MATCHES "the model's pick agrees with the measured winner on [0-3] of 3 ranges\n")
    message(FATAL_ERROR "no agreement summary:\n${out}")
  endif()
elseif(CASE STREQUAL "bounds")
  execute_process(COMMAND "${GEN}" "${topo}" --wisdom /dev/zero -o "${WORK}/out"
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  string(FIND "${err}" "/dev/zero: error: file is larger than 268435456 bytes\n" at)
  if(NOT rc EQUAL 1 OR NOT at EQUAL 0 OR EXISTS "${WORK}/out")
    message(FATAL_ERROR "--wisdom /dev/zero: rc ${rc}:\n${err}")
  endif()
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()
message(STATUS "ok ${CASE}")
