# treeduce_generate(NAME <name> TOPOLOGY <file|local> [WISDOM <file>...] [OUTPUT_DIR <dir>]
#                   [OPTIONS <gen args>...])
#
# Runs treeduce-gen at build time and builds libtreeduce_<name>.so, which
# defines MPI_Allreduce (through PMPI) and trd_<name>_allreduce.  The target
# is treeduce_<name>; link it into an MPI program, or LD_PRELOAD the library.
# WISDOM (or OPTIONS --wisdom <file>) names what treeduce-tune measured on
# the machine (treeduce-wisdom(5)): one file or several, which combine (the
# newer measurement where two overlap), those of WISDOM first, in order;
# relative paths, the topology's too, are from the current source
# directory.  Regenerates when the topology file, a wisdom file or the
# generator changes.
#
# The generator is the target treeduce-gen in treeduce's own build (or the
# host build's, imported, under TREEDUCE_SMPI), and treeduce::treeduce-gen
# where this file comes with the installed package (find_package(treeduce)).
# treeduce_generator(<gen var> <depends var>): the generator's target
# (treeduce-gen in treeduce's own build, or the host build's, imported, under
# TREEDUCE_SMPI; treeduce::treeduce-gen from the installed package) and what
# a rule running it depends on (the target, or an imported one's file).
function(treeduce_generator gen_var deps_var)
  if(TARGET treeduce-gen)
    set(gen treeduce-gen)
  elseif(TARGET treeduce::treeduce-gen)
    set(gen treeduce::treeduce-gen)
  else()
    message(FATAL_ERROR "treeduce_generate: no treeduce-gen (find_package(treeduce) or add_subdirectory first)")
  endif()
  set(deps ${gen})
  get_target_property(gen_imported ${gen} IMPORTED)
  if(gen_imported)
    set(deps "$<TARGET_FILE:${gen}>") # installed, or from a host build (TREEDUCE_SMPI)
  endif()
  set(${gen_var} ${gen} PARENT_SCOPE)
  set(${deps_var} ${deps} PARENT_SCOPE)
endfunction()

function(treeduce_generate)
  cmake_parse_arguments(TG "" "NAME;TOPOLOGY;OUTPUT_DIR" "OPTIONS;WISDOM" ${ARGN})
  if(NOT TG_NAME OR NOT TG_TOPOLOGY)
    message(FATAL_ERROR "treeduce_generate: NAME and TOPOLOGY are required")
  endif()
  if(NOT TG_OUTPUT_DIR)
    set(TG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}/treeduce_${TG_NAME}")
  endif()
  set(topo "${TG_TOPOLOGY}")
  treeduce_generator(gen deps)
  if(NOT topo STREQUAL "local")
    get_filename_component(topo "${topo}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND deps "${topo}")
  endif()
  # the wisdom, by keyword or among the options: absolute, and a dependency
  set(opts "")
  set(wisdom_next FALSE)
  foreach(arg IN LISTS TG_OPTIONS)
    if(wisdom_next OR arg MATCHES "^--wisdom=")
      string(REGEX REPLACE "^--wisdom=" "" file "${arg}")
      get_filename_component(file "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
      list(APPEND deps "${file}")
      if(wisdom_next)
        list(APPEND opts "${file}")
      else()
        list(APPEND opts "--wisdom=${file}")
      endif()
      set(wisdom_next FALSE)
    else()
      list(APPEND opts "${arg}")
      if(arg STREQUAL "--wisdom")
        set(wisdom_next TRUE)
      endif()
    endif()
  endforeach()
  set(TG_OPTIONS ${opts})
  set(wisdom_opts "")
  foreach(file IN LISTS TG_WISDOM)
    get_filename_component(wisdom "${file}" ABSOLUTE BASE_DIR "${CMAKE_CURRENT_SOURCE_DIR}")
    list(APPEND deps "${wisdom}")
    list(APPEND wisdom_opts --wisdom "${wisdom}")
  endforeach()
  set(outs "${TG_OUTPUT_DIR}/trd_${TG_NAME}.h" "${TG_OUTPUT_DIR}/trd_${TG_NAME}.c"
           "${TG_OUTPUT_DIR}/trd_${TG_NAME}_mpi.c")
  add_custom_command(
    OUTPUT ${outs}
    COMMAND $<TARGET_FILE:${gen}> "${topo}" -o "${TG_OUTPUT_DIR}" --name ${TG_NAME} ${wisdom_opts}
            ${TG_OPTIONS}
    DEPENDS ${deps}
    COMMENT "treeduce-gen: planning allreduce for ${TG_NAME}"
    VERBATIM)
  treeduce_add_library(${TG_NAME} "${TG_OUTPUT_DIR}")
  if(TRD_DOT_EXECUTABLE) # the machine graph as SVG (Graphviz found)
    treeduce_render_dot(${TG_NAME} "${TG_OUTPUT_DIR}" "${CMAKE_CURRENT_BINARY_DIR}" ${gen} "${deps}" "${topo}"
                        --name ${TG_NAME} ${TG_OPTIONS})
  endif()
endfunction()

# treeduce_add_library(<name> <dir>): libtreeduce_<name>.so from generated
# sources already in <dir> (used for the checked-in generated/ machines).
# Under SMPI an object library, linked into each program: each simulated rank
# needs its own copy of the library's globals, which SMPI gives the program's
# own code only; and SimGrid declares the MPI_ routines weak, so a static
# archive's MPI_Allreduce would never be pulled into the link.
function(treeduce_add_library name dir)
  set(kind SHARED)
  if(TREEDUCE_SMPI)
    set(kind OBJECT)
  endif()
  add_library(treeduce_${name} ${kind} "${dir}/trd_${name}.c" "${dir}/trd_${name}_mpi.c")
  target_include_directories(treeduce_${name} PUBLIC "${dir}")
  target_link_libraries(treeduce_${name} PUBLIC treeduce::runtime)
endfunction()

# treeduce_render_dot(<name> <dir> <working dir> <generator target> <depends> <treeduce-gen args>...):
# <dir>/<name>.dot, treeduce-gen's --dot picture of the machine (switch tree
# and ring), and <dir>/<name>.svg rendered from it by Graphviz's dot, both
# built with ALL (target treeduce_<name>_svg).  Only with TRD_DOT_EXECUTABLE.
find_program(TRD_DOT_EXECUTABLE dot DOC "Graphviz dot: renders the machines' --dot graphs to SVG")
function(treeduce_render_dot name dir workdir gen depends)
  set(dot "${dir}/${name}.dot")
  set(svg "${dir}/${name}.svg")
  add_custom_command(
    OUTPUT "${dot}" "${svg}"
    COMMAND "${CMAKE_COMMAND}" -E make_directory "${dir}"
    COMMAND $<TARGET_FILE:${gen}> ${ARGN} --dot "${dot}"
    COMMAND "${TRD_DOT_EXECUTABLE}" -Tsvg -o "${svg}" "${dot}"
    DEPENDS ${depends}
    WORKING_DIRECTORY "${workdir}"
    COMMENT "treeduce-gen --dot, Graphviz: ${svg}"
    VERBATIM)
  add_custom_target(treeduce_${name}_svg ALL DEPENDS "${svg}")
endfunction()
