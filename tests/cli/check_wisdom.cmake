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
#              readers refuse one, nothing written;
#   two        --wisdom twice (buildhost.wisdom and the newer
#              buildhost-newer.wisdom, version 2): the merged tables with
#              the model's entries, both files in the banner, and
#              --explain's check points, conflicts and the model's sizes;
#   generated2 the same tables in FILE (treeduce_generate with two files);
#   overlap    a file whose ranges overlap: refused at the later range's
#              FROM, exit 1, nothing written;
#   toolong    ranges with gaps that, with the model's entries between them,
#              make a table longer than the runtime reads: refused, exit 1,
#              nothing written.
set(topo "${SRC}/topologies/buildhost.xml")
set(wisdom "${SRC}/tests/data/buildhost.wisdom")
set(newer "${SRC}/tests/data/buildhost-newer.wisdom")
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

# The tables a generated file must hold for buildhost.wisdom (given as
# the path w).
function(expect_tables file w)
  file(READ "${file}" c)
  expect_lines("${c}"
    "/* allreduce, 1 node x 2:
 *   from 0 B: shm:rx:2 1.25 us, runner-up mpi 1.5 us (${w}:12)
 *   from 4096 B: shm 20.5 us, runner-up shm:tree:2 22 us (${w}:13)
 *   from 1048576 B: mpi 900 us, runner-up shm 950.2 us (${w}:14)
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

# The tables of buildhost.wisdom (w) merged with buildhost-newer.wisdom (n):
# the newer ranges whole, the older ones clipped, the model's entries for
# the range the check gave it and the sizes no range covers.
function(expect_tables2 file w n)
  file(READ "${file}" c)
  expect_lines("${c}"
    "/* allreduce, 1 node x 2:
 *   from 0 B: shm:rx:2 1.25 us, runner-up mpi 1.5 us (${w}:12)
 *   from 2048 B: shm:tree:2 9.5 us, runner-up shm 10 us (${n}:15)
 *   from 65536 B: the model (${n}:17: faster in the check)
 *   from 262144 B: shm 20.5 us, runner-up shm:tree:2 22 us (${w}:13)
 *   from 1048576 B: mpi 900 us, runner-up shm 950.2 us (${w}:14)
 */
static const trd_size_choice tuned_0[5] = {
    {.below = 2048, .alg = \"shm:rx\", .params = \"2\"},
    {.below = 65536, .alg = \"shm:tree\", .params = \"2\"},
    {.below = 262144, .alg = NULL, .params = NULL},
    {.below = 1048576, .alg = \"shm\", .params = \"\"},
    {.below = SIZE_MAX, .alg = \"mpi\", .params = \"\"},
};"
    "/* allgather, 1 node x 2:
 *   from 0 B: the model
 *   from 1024 B: mpi 5 us (${n}:19)
 */
static const trd_size_choice tuned_3[2] = {
    {.below = 1024, .alg = NULL, .params = NULL},
    {.below = SIZE_MAX, .alg = \"mpi\", .params = \"\"},
};"
    "static const trd_tuned_shape tuned[4] = {
    {.coll = TRD_COLL_ALLREDUCE, .nnodes = 1, .ppn = 2, .choices = tuned_0, .nchoices = 5},
    {.coll = TRD_COLL_BCAST, .nnodes = 1, .ppn = 2, .choices = tuned_1, .nchoices = 1},
    {.coll = TRD_COLL_REDUCE_SCATTER_BLOCK, .nnodes = 1, .ppn = 2, .choices = tuned_2, .nchoices = 1},
    {.coll = TRD_COLL_ALLGATHER, .nnodes = 1, .ppn = 2, .choices = tuned_3, .nchoices = 2},
};"
    " * by wisdom
 *   ${w} of 2026-11-27T00:30:00Z
 *   ${n} of 2026-11-29T10:00:00Z
")
  file(SHA256 "${SRC}/tests/data/buildhost.wisdom" sha)
  file(SHA256 "${SRC}/tests/data/buildhost-newer.wisdom" sha2)
  expect_lines("${c}" " * wisdom:  ${w}\n * sha256:  ${sha}\n * wisdom:  ${n}\n * sha256:  ${sha2}\n */")
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
  expect_tables("${WORK}/out/trd_vm.c" "${wisdom}")
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
  expect_tables("${FILE}" "${wisdom}")
elseif(CASE STREQUAL "generated2")
  expect_tables2("${FILE}" "${wisdom}" "${newer}")
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
    "measured size ranges, used in place of the model's (machine vm,
  MPI MPICH Version: 4.0 \"test\"):
  wisdom ${wisdom}: 2026-11-27T00:30:00Z, 2 ranks
"
    "  allreduce, 1 node x 2 ranks:
    ${wisdom}:12: 0 B .. 4 KiB (at 180 B): measured shm:rx:2 1.25 us, runner-up mpi 1.5 us
      model: shm:rx:2 "
    "    ${wisdom}:14: 1 MiB and up (at 4 MiB): measured mpi 900 us, runner-up shm 950.2 us
      model: none for the MPI library; picks "
    "  bcast, 1 node x 2 ranks:
    ${wisdom}:15: 0 B and up (at 32 B): measured binomial 2 us, runner-up mpi 2.5 us
      model: binomial "
    "  reduce_scatter_block, 1 node x 2 ranks:
    ${wisdom}:16: 0 B and up (at 32 B): measured mpi 3 us
      model: none for the MPI library; picks "
    "  the model fills the sizes no range covers (and those the check gave it):
    allreduce 1x2: none
    bcast 1x2: none
    reduce_scatter_block 1x2: none
    allreduce: every other shape
    reduce_scatter_block: every other shape
    allgather: every shape
    reduce: every shape
    bcast: every other shape
")
  if(out MATCHES "conflict:")
    message(FATAL_ERROR "a conflict with one file:\n${out}")
  endif()
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
elseif(CASE STREQUAL "two")
  execute_process(COMMAND "${GEN}" "${topo}" --wisdom "${wisdom}" --wisdom "${newer}" -o "${WORK}/out"
                          --explain
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "treeduce-gen --wisdom A --wisdom B failed (${rc}):\n${err}")
  endif()
  expect_tables2("${WORK}/out/trd_vm.c" "${wisdom}" "${newer}")
  expect_lines("${out}"
    "  wisdom ${wisdom}: 2026-11-27T00:30:00Z, 2 ranks
  wisdom ${newer}: 2026-11-29T10:00:00Z, 2 ranks
"
    "    ${newer}:15: 2 KiB .. 64 KiB (at 11585 B): measured shm:tree:2 9.5 us, runner-up shm 10 us
      model: shm:tree:2 "
    "
      checked at 4096 B: tuned shm:tree:2 9.25 us, untuned (shm) 10.5 us, MPI 12 us, noise 1.0%: kept
    ${newer}:17: 64 KiB .. 256 KiB (at 131071 B): the model's tables, the measured winner not faster in the check
      checked at 131072 B: tuned shm 40.5 us, untuned (shm:rx:2) 30.25 us, MPI 45 us, noise 2.0%: to the model
    ${wisdom}:13: 256 KiB .. 1 MiB (at 524287 B): measured shm 20.5 us"
    "  conflict: allreduce 1x2 [2048, 4096): ${newer}:15 (2026-11-29T10:00:00Z) measured shm:tree:2, ${wisdom}:12 (2026-11-27T00:30:00Z) measured shm:rx:2; the newer (${newer}) is used
  conflict: allreduce 1x2 [4096, 65536): ${newer}:15 (2026-11-29T10:00:00Z) measured shm:tree:2, ${wisdom}:13 (2026-11-27T00:30:00Z) measured shm; the newer (${newer}) is used
  conflict: allreduce 1x2 [65536, 262144): ${newer}:17 (2026-11-29T10:00:00Z) measured model, ${wisdom}:13 (2026-11-27T00:30:00Z) measured shm; the newer (${newer}) is used
  the model fills the sizes no range covers (and those the check gave it):
    allreduce 1x2: 64 KiB .. 256 KiB (${newer}:17, by its check)
    bcast 1x2: none
    reduce_scatter_block 1x2: none
    allgather 1x2: 0 B .. 1 KiB
    allreduce: every other shape
")
  # the same files the other way round: the same tables (the dates decide)
  execute_process(COMMAND "${GEN}" "${topo}" --wisdom "${newer}" --wisdom "${wisdom}" -o "${WORK}/swapped"
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  file(READ "${WORK}/swapped/trd_vm.c" c)
  if(NOT rc EQUAL 0 OR NOT c MATCHES "tuned_0\\[5\\] = {\n    {.below = 2048, .alg = \"shm:rx\", .params = \"2\"},\n    {.below = 65536, .alg = \"shm:tree\"")
    message(FATAL_ERROR "--wisdom B --wisdom A: rc ${rc}:\n${err}\n${c}")
  endif()
elseif(CASE STREQUAL "overlap")
  file(READ "${wisdom}" text)
  string(REPLACE "treeduce-wisdom 1" "treeduce-wisdom 2" text "${text}")
  string(REPLACE "range allreduce 1 2 4096 1048576" "range allreduce 1 2 2048 1048576" text "${text}")
  file(WRITE "${WORK}/overlap.wisdom" "${text}")
  execute_process(COMMAND "${GEN}" "${topo}" --wisdom "${newer}" --wisdom "${WORK}/overlap.wisdom"
                          -o "${WORK}/out" --dot "${WORK}/ring.dot"
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
  set(msg "${WORK}/overlap.wisdom:13:21: error: allreduce 1x2 range [2048, 1048576) overlaps [0, 4096) of line 12\n")
  string(FIND "${err}" "${msg}" at)
  string(FIND "${err}" "treeduce-gen: 1 error; nothing written\n" end)
  if(NOT rc EQUAL 1 OR NOT at EQUAL 0 OR end LESS 0)
    message(FATAL_ERROR "overlapping ranges: rc ${rc}, expected\n${msg}got\n${err}")
  endif()
  if(EXISTS "${WORK}/out" OR EXISTS "${WORK}/ring.dot")
    message(FATAL_ERROR "treeduce-gen wrote output with overlapping ranges")
  endif()
elseif(CASE STREQUAL "toolong")
  file(STRINGS "${wisdom}" head REGEX "^(treeduce-wisdom|machine|digest|mpi|date|ranks|hosts|budget) ")
  string(REPLACE ";" "\n" text "${head}")
  string(REPLACE "treeduce-wisdom 1" "treeduce-wisdom 2" text "${text}")
  foreach(i RANGE 16) # 17 ranges, 16 gaps between them and the sizes above the last
    math(EXPR from "${i} * 128")
    math(EXPR below "${from} + 64")
    string(APPEND text "\nrange allreduce 1 2 ${from} ${below} ring 1 - 0")
  endforeach()
  file(WRITE "${WORK}/long.wisdom" "${text}\nend\n")
  execute_process(COMMAND "${GEN}" "${topo}" --wisdom "${WORK}/long.wisdom" -o "${WORK}/out"
                  RESULT_VARIABLE rc ERROR_VARIABLE err)
  set(msg "${WORK}/long.wisdom:9:1: error: allreduce 1x2: the wisdom's ranges and the model's sizes between them make 34 size ranges, the runtime reads at most 32\n")
  string(FIND "${err}" "${msg}" at)
  if(NOT rc EQUAL 1 OR NOT at EQUAL 0 OR EXISTS "${WORK}/out")
    message(FATAL_ERROR "a table too long: rc ${rc}, expected\n${msg}got\n${err}")
  endif()
else()
  message(FATAL_ERROR "unknown CASE ${CASE}")
endif()
message(STATUS "ok ${CASE}")
