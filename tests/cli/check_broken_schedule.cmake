# A schedule broken on purpose (--break-schedule drops one op of one rank
# from every schedule of the algorithms named rd -- allreduce's recursive
# doubling, the first verified, and allgather's -- before verification): treeduce-gen
# refuses the machine, names the algorithm, the shape, the rank and what is
# wrong, exits non-zero and writes nothing.  The op is rank 1's reduce, the
# one mpi.allreduce.broken_planner drops from the runtime's plan
# (TREEDUCE_BREAK=rd:1:2), where the MPI test finds the results wrong.  Then the same machine
# unbroken is written, and --schedule prints a rank's step script.
# -DGEN -DTOPO -DWORK
file(REMOVE_RECURSE "${WORK}")
execute_process(COMMAND "${GEN}" "${TOPO}" -o "${WORK}/out" --break-schedule rd:1:2
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out)
if(rc EQUAL 0)
  message(FATAL_ERROR "treeduce-gen wrote a machine whose rd schedule is broken")
endif()
set(want "testbed.topo: error: the rd schedule for 2 nodes x 1 ranks (3 elements, shared memory, rank order) fails verification: rank 1: recvbuf[0] holds 1 of the 2 contributions; nothing written")
string(FIND "${err}" "${want}" at)
if(at LESS 0)
  message(FATAL_ERROR "not the expected message:\n${err}\nexpected:\n${want}")
endif()
if(EXISTS "${WORK}/out")
  message(FATAL_ERROR "treeduce-gen wrote output for a broken schedule")
endif()
execute_process(COMMAND "${GEN}" "${TOPO}" -o "${WORK}/out" RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT EXISTS "${WORK}/out/trd_testbed.c")
  message(FATAL_ERROR "the unbroken machine was not written:\n${err}")
endif()
execute_process(COMMAND "${GEN}" "${TOPO}" --schedule 5 --algorithm ring RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
if(NOT rc EQUAL 0 OR NOT out MATCHES "# ring allreduce, rank 5 of 8, 8192 elements, commutative op\nSTEP 0\n  COPY recvbuf\\[0:8192\\] = sendbuf\\[0:8192\\]\nSTEP 1\n  SENDTO 6 recvbuf\\[5120:6144\\] RECVFROM 4 tmp\\[0:1024\\]\n  REDUCE recvbuf\\[4096:5120\\] = tmp\\[0:1024\\] op recvbuf\\[4096:5120\\]\n"
   OR NOT out MATCHES "# verified over all 8 ranks: ok")
  message(FATAL_ERROR "--schedule printed:\n${out}${err}")
endif()
message(STATUS "refused as expected:\n${err}")
