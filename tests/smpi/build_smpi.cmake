# Configure and build the SMPI tree for the smpi.* tests:
#   cmake -DSRC=<source> -DBIN=<smpi build dir> -DGEN=<host treeduce-gen>
#         -DSMPICC=<smpicc> -DWERROR=<ON|OFF> -P build_smpi.cmake
# Only the test program and what it links are built (the runtime, the
# algorithms, one machine), with the host build's generator, which also
# exports the machine as the SimGrid platform the tests run on
# (<smpi build dir>/bluewaters64.xml).
if(NOT EXISTS ${BIN}/CMakeCache.txt)
  execute_process(COMMAND ${CMAKE_COMMAND} -S ${SRC} -B ${BIN} -DTREEDUCE_SMPI=ON
                          -DCMAKE_C_COMPILER=${SMPICC} -DTREEDUCE_GEN=${GEN} -DTREEDUCE_WERROR=${WERROR}
                  RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    file(REMOVE ${BIN}/CMakeCache.txt)
    message(FATAL_ERROR "configuring the SMPI build in ${BIN} failed")
  endif()
endif()
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BIN} --target smpi_allreduce RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "building the SMPI test program in ${BIN} failed")
endif()
execute_process(COMMAND ${GEN} ${SRC}/topologies/bluewaters64.topo --simgrid ${BIN}/bluewaters64.xml
                RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "treeduce-gen --simgrid failed")
endif()
