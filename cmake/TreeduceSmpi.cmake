# Build for SimGrid's SMPI (-DTREEDUCE_SMPI=ON, C compiler smpicc).
#
# smpicc compiles against SimGrid's mpi.h and links every program as a shared
# object that smpirun loads once per simulated rank, with the program's own
# globals private to each rank (smpi/privatization).  So:
# - MPI::MPI_C is an empty interface target: smpicc brings MPI itself;
# - the generated machine libraries are object libraries (treeduce_add_library), linked
#   into each program, where a shared library's globals would be one copy for
#   every simulated rank of the process;
# - treeduce-gen, a host program, is imported from a host build
#   (-DTREEDUCE_GEN=/path/to/build/treeduce-gen).
# Run with smpirun -platform PLATFORM.xml -hostfile HOSTS -np N PROGRAM.

get_filename_component(trd_cc_name "${CMAKE_C_COMPILER}" NAME)
if(NOT trd_cc_name MATCHES "^smpicc")
  message(FATAL_ERROR "TREEDUCE_SMPI needs smpicc as the C compiler (got ${CMAKE_C_COMPILER}); "
                      "configure a fresh build directory")
endif()
find_program(TREEDUCE_SMPIRUN smpirun REQUIRED)

set(TREEDUCE_GEN "" CACHE FILEPATH "treeduce-gen of a host build (an SMPI build makes no generator)")
if(NOT TREEDUCE_GEN OR NOT EXISTS "${TREEDUCE_GEN}")
  message(FATAL_ERROR "TREEDUCE_SMPI: set TREEDUCE_GEN to the treeduce-gen of a host build "
                      "(cmake -S . -B build && cmake --build build --target treeduce-gen; "
                      "then -DTREEDUCE_GEN=build/treeduce-gen)")
endif()
add_executable(treeduce-gen IMPORTED)
set_target_properties(treeduce-gen PROPERTIES IMPORTED_LOCATION "${TREEDUCE_GEN}")

add_library(MPI::MPI_C INTERFACE IMPORTED)
# smpicc's malloc/free macros (SMPI_SHARED_MALLOC by size) would also rename
# struct members called free; treeduce's memory is its own.
set_target_properties(MPI::MPI_C PROPERTIES INTERFACE_COMPILE_DEFINITIONS SMPI_NO_OVERRIDE_MALLOC)
set(MPIEXEC_EXECUTABLE "${TREEDUCE_SMPIRUN}")
set(MPIEXEC_NUMPROC_FLAG -np)

# smpicc's shared object has no program interpreter and entry point 0: run
# directly (treeduce-tune --help), the kernel jumps to address 0 of it and it
# dies of SIGSEGV before main().  trd_smpi_runnable(TARGET) links a program
# with the C start code of a position-independent executable (Scrt1.o, entry
# _start) and gives its sources the host's program interpreter
# (TRD_SMPI_INTERP, for a .interp section), so that run directly its main()
# starts, outside any simulation; smpirun loads it as before.
function(trd_smpi_runnable target)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=Scrt1.o
                  OUTPUT_VARIABLE start OUTPUT_STRIP_TRAILING_WHITESPACE RESULT_VARIABLE rc1)
  execute_process(COMMAND ${CMAKE_READELF} -l ${CMAKE_COMMAND} OUTPUT_VARIABLE phdrs RESULT_VARIABLE rc2)
  if(rc1 EQUAL 0 AND IS_ABSOLUTE "${start}" AND EXISTS "${start}" AND rc2 EQUAL 0
     AND phdrs MATCHES "program interpreter: ([^]\n]+)\\]")
    target_compile_definitions(${target} PRIVATE "TRD_SMPI_INTERP=\"${CMAKE_MATCH_1}\"")
    target_link_options(${target} PRIVATE "${start}" -Wl,-e,_start)
  else()
    message(STATUS "${target}: no Scrt1.o or program interpreter found; the SMPI build's "
                   "${target} runs only under smpirun")
  endif()
endfunction()
