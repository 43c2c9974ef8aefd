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
