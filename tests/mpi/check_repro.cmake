# Reproducible mode across runs: test_repro on NP ranks under every run of
# RUNS (blank-separated MODE/HOSTS/ALGORITHM/SHM), MODE one of
#   repro   TREEDUCE_REPRODUCIBLE=1 (with TREEDUCE_ALGORITHM=ALGORITHM: it must win)
#   forced  TREEDUCE_ALGORITHM=repro, no TREEDUCE_REPRODUCIBLE
#   plain   neither: ALGORITHM as asked, treeduce from the first call
# The repro and forced runs must pass with --expect-tree (bitwise the
# rank-order tree test_repro computes) and print the same digests, every op
# and count; every run must pass its checks against PMPI_Allreduce.  With
# NP >= 3 the plain runs must show that the comparison can fail: at least
# two different MPI_SUM digests at the largest count, and a result that is
# not the tree's.
#   cmake -DMPIEXEC=mpiexec -DNP=4 -DPROG=test_repro -DRUNS="..." -P check_repro.cmake
foreach(v MPIEXEC NP PROG RUNS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check_repro.cmake: -D${v}=... is required")
  endif()
endforeach()

string(REPLACE " " ";" runs "${RUNS}")
set(reference "")
set(nrepro 0)
set(plain_sums "")
set(plain_differs 0)
foreach(run IN LISTS runs)
  string(REPLACE "/" ";" f "${run}")
  list(GET f 0 mode)
  list(GET f 1 hosts)
  list(GET f 2 alg)
  list(GET f 3 shm)
  set(env TREEDUCE_HOSTS=${hosts} TREEDUCE_SHM=${shm} TREEDUCE_VERBOSE=2)
  set(args "")
  if(mode STREQUAL "repro")
    list(APPEND env TREEDUCE_REPRODUCIBLE=1 TREEDUCE_ALGORITHM=${alg})
    set(args --expect-tree)
    set(runs_re "MPI_Allreduce runs repro\n")
  elseif(mode STREQUAL "forced")
    list(APPEND env TREEDUCE_REPRODUCIBLE=0 TREEDUCE_ALGORITHM=repro)
    set(args --expect-tree)
    set(runs_re "MPI_Allreduce runs repro\n")
  elseif(mode STREQUAL "plain")
    # treeduce from the first call: the first calls of a communicator go to
    # the MPI library's routine by default, whose sums differ from treeduce's
    # in the last bits, and test_repro's repeated call would see the switch
    list(APPEND env TREEDUCE_REPRODUCIBLE=0 TREEDUCE_ALGORITHM=${alg} TREEDUCE_SEGMENT_CALLS=1 TREEDUCE_SEGMENT_BYTES=0)
    set(runs_re "MPI_Allreduce runs [a-z]")
  else()
    message(FATAL_ERROR "check_repro.cmake: unknown mode '${mode}' in '${run}'")
  endif()
  execute_process(COMMAND ${CMAKE_COMMAND} -E env ${env} ${MPIEXEC} -n ${NP} ${PROG} ${args}
                  OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc TIMEOUT 240)
  if(NOT rc EQUAL 0 OR NOT out MATCHES " passed, 0 failed")
    message(FATAL_ERROR "${run}: test_repro failed (${rc}):\n${out}\n${err}")
  endif()
  if(NOT err MATCHES "${runs_re}")
    message(FATAL_ERROR "${run}: expected '${runs_re}' on stderr:\n${err}")
  endif()
  if(mode STREQUAL "repro" AND NOT alg STREQUAL "auto" AND NOT alg STREQUAL "repro" AND
     NOT err MATCHES "TREEDUCE_REPRODUCIBLE is set: MPI_Allreduce runs repro, not ${alg}")
    message(FATAL_ERROR "${run}: TREEDUCE_VERBOSE did not say that repro replaced ${alg}:\n${err}")
  endif()
  if(mode STREQUAL "plain" AND err MATCHES "runs repro")
    message(FATAL_ERROR "${run}: ran repro without being asked to:\n${err}")
  endif()
  string(REGEX MATCHALL "digest [^\n]*" digests "${out}")
  list(LENGTH digests nd)
  if(nd EQUAL 0)
    message(FATAL_ERROR "${run}: no digests in:\n${out}")
  endif()
  message(STATUS "${run}:")
  foreach(d IN LISTS digests)
    message(STATUS "  ${d}")
  endforeach()
  if(mode STREQUAL "plain")
    # the MPI_SUM line of the largest count is the last sum line
    string(REGEX MATCHALL "digest op=sum [^\n]*" sums "${out}")
    list(GET sums -1 last)
    string(REGEX REPLACE " tree=.*" "" last_digest "${last}")
    list(APPEND plain_sums "${last_digest}")
    if(last MATCHES "tree=differs")
      math(EXPR plain_differs "${plain_differs} + 1")
    endif()
  else()
    math(EXPR nrepro "${nrepro} + 1")
    if(reference STREQUAL "")
      set(reference "${digests}")
      set(reference_run "${run}")
    elseif(NOT digests STREQUAL reference)
      message(FATAL_ERROR "reproducible mode gave different bits:\n${reference_run}: ${reference}\n"
                          "${run}: ${digests}")
    endif()
  endif()
endforeach()

list(REMOVE_DUPLICATES plain_sums)
list(LENGTH plain_sums ndistinct)
if(NP GREATER 2)
  if(ndistinct LESS 2 OR plain_differs EQUAL 0)
    message(FATAL_ERROR "without reproducible mode the runs should differ at the largest count: "
                        "${ndistinct} distinct MPI_SUM digests, ${plain_differs} unlike the tree")
  endif()
endif()
message(STATUS "${NP} ranks: ${nrepro} reproducible runs, identical digests; without reproducible "
               "mode ${ndistinct} distinct MPI_SUM digests at the largest count, ${plain_differs} "
               "unlike the rank-order tree")
