# treeduce-calibrate on 2 ranks writes its measurement into copies of a DSL and
# an XML topology: only the measured link class changes (plus the comment line
# above it), and treeduce-gen still accepts the result.  A --write path that
# does not exist and a read-only file fail with a non-zero exit and leave
# everything as it was.
#   -DCAL=treeduce-calibrate -DGEN=treeduce-gen -DMPIEXEC=mpiexec -DDATA=tests/data -DWORK=dir
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(calibrate out_rc out_text)
  execute_process(COMMAND "${MPIEXEC}" -n 2 "${CAL}" --reps 5 ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  set(${out_rc} "${rc}" PARENT_SCOPE)
  set(${out_text} "${out}${err}" PARENT_SCOPE)
endfunction()

# name: fixture; link_re: the measured link class as written in that format
foreach(kind topo xml)
  if(kind STREQUAL "topo")
    set(link_re "link core { latency [^;\n]+; bandwidth [^;\n]+; }")
    set(comment_re "# measured by treeduce-calibrate on [^\n]*, 2 ranks\nlink core ")
  else()
    set(link_re "<link name=\"core\" latency=\"[^\"\n]+\" bandwidth=\"[^\"\n]+\"/>")
    set(comment_re "  <!-- measured by treeduce-calibrate on [^\n]*, 2 ranks -->\n  <link name=\"core\" ")
  endif()
  set(orig "${DATA}/calib_one.${kind}")
  set(copy "${WORK}/calib_one.${kind}")
  file(COPY "${orig}" DESTINATION "${WORK}")
  calibrate(rc out --write "${copy}")
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "calibrate --write ${copy} failed (${rc}):\n${out}")
  endif()
  if(NOT out MATCHES "same package: ranks 0 and 1" OR NOT out MATCHES "updated link class 'core'")
    message(FATAL_ERROR "calibrate did not measure and write the package level:\n${out}")
  endif()
  file(READ "${orig}" before)
  file(READ "${copy}" after)
  if(NOT after MATCHES "${comment_re}")
    message(FATAL_ERROR "no comment line right above link 'core' in ${copy}:\n${after}")
  endif()
  # the comment once; apart from it and the values of link 'core', byte for byte the same
  string(REGEX MATCHALL "measured by treeduce-calibrate" marks "${after}")
  list(LENGTH marks nmarks)
  string(REGEX REPLACE "[^\n]*measured by treeduce-calibrate on [^\n]*\n" "" after_n "${after}")
  string(REGEX REPLACE "${link_re}" "<CORE>" after_n "${after_n}")
  string(REGEX REPLACE "${link_re}" "<CORE>" before_n "${before}")
  if(NOT before_n MATCHES "<CORE>")
    message(FATAL_ERROR "the fixture ${orig} has no link 'core' as this test expects it")
  endif()
  if(NOT nmarks EQUAL 1 OR NOT after_n STREQUAL before_n OR after STREQUAL before)
    message(FATAL_ERROR "${copy} changed beyond link 'core' and its comment:\n--- before\n"
                        "${before}--- after\n${after}")
  endif()
  execute_process(COMMAND "${GEN}" "${copy}" --explain RESULT_VARIABLE rc
                  OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "treeduce-gen rejects the calibrated ${copy}:\n${err}")
  endif()

  # a second run replaces the comment instead of adding one
  calibrate(rc out --write "${copy}")
  file(READ "${copy}" again)
  string(REGEX MATCHALL "measured by treeduce-calibrate" marks "${again}")
  list(LENGTH marks nmarks)
  if(NOT rc EQUAL 0 OR NOT nmarks EQUAL 1)
    message(FATAL_ERROR "second calibration of ${copy} (rc ${rc}) left ${nmarks} comments:\n${again}\n${out}")
  endif()

  # read-only: refused, untouched, no temporary file left behind
  set(ro "${WORK}/ro/calib_one.${kind}")
  file(COPY "${orig}" DESTINATION "${WORK}/ro" FILE_PERMISSIONS OWNER_READ GROUP_READ WORLD_READ)
  calibrate(rc out --write "${ro}")
  file(READ "${ro}" ro_after)
  file(GLOB leftovers "${WORK}/ro/.*" "${WORK}/.*")
  if(rc EQUAL 0 OR NOT ro_after STREQUAL before OR leftovers)
    message(FATAL_ERROR "read-only ${ro}: rc ${rc}, changed or left ${leftovers}:\n${out}")
  endif()
  if(NOT out MATCHES "read-only")
    message(FATAL_ERROR "read-only ${ro}: no clear message:\n${out}")
  endif()
  file(CHMOD "${ro}" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

  # a path that does not exist: refused, nothing created
  calibrate(rc out --write "${WORK}/no/such/calib.${kind}")
  if(rc EQUAL 0 OR EXISTS "${WORK}/no" OR NOT out MATCHES "cannot open")
    message(FATAL_ERROR "bad --write path: rc ${rc}:\n${out}")
  endif()
  message(STATUS "${kind}: calibrated, checked and refused as expected")
endforeach()
