# treeduce-calibrate on 2 ranks writes its measurement into copies of a DSL and
# an XML topology: only the measured link class changes (plus the comment line
# above it), and treeduce-gen still accepts the result.  alpha_r [RM §3, Eq. 3]
# is written exactly when the printout says the pipelined postal fit was
# meaningful (on a busy 2-core machine it may not be: either way is checked).
# A second run over a core link whose alpha_r is far above any measured
# latency replaces that alpha_r or removes it, and the file still reads back.
# A --write path that does not exist and a read-only file fail with exit status
# 2 (an input error; not a crash) and leave everything as it was.
#   -DCAL=treeduce-calibrate -DGEN=treeduce-gen -DMPIEXEC=mpiexec -DDATA=tests/data -DWORK=dir
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}")

function(calibrate out_rc out_text)
  execute_process(COMMAND "${MPIEXEC}" -n 2 "${CAL}" --reps 5 ${ARGN}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err TIMEOUT 120)
  set(${out_rc} "${rc}" PARENT_SCOPE)
  set(${out_text} "${out}${err}" PARENT_SCOPE)
endfunction()

# treeduce-gen must read the written file back
function(expect_accepted file what)
  execute_process(COMMAND "${GEN}" "${file}" --explain RESULT_VARIABLE rc
                  OUTPUT_QUIET ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "treeduce-gen rejects the ${what} ${file}:\n${err}")
  endif()
endfunction()

# name: fixture; link_re: the measured link class as written in that format
foreach(kind topo xml)
  if(kind STREQUAL "topo")
    set(link_re "link core { latency [^;\n]+; bandwidth [^;\n]+;( alpha_r [^;\n]+;)? }")
    set(comment_re "# measured by treeduce-calibrate on [^\n]*, 2 ranks\nlink core ")
    set(ar_fmt "alpha_r @V@;")
    set(stale "link core { latency 1s; bandwidth 20GB/s; alpha_r 1s; }")
  else()
    set(link_re "<link name=\"core\" latency=\"[^\"\n]+\" bandwidth=\"[^\"\n]+\"( alpha_r=\"[^\"\n]+\")?/>")
    set(comment_re "  <!-- measured by treeduce-calibrate on [^\n]*, 2 ranks -->\n  <link name=\"core\" ")
    set(ar_fmt "alpha_r=\"@V@\"")
    set(stale "<link name=\"core\" latency=\"1s\" bandwidth=\"20GB/s\" alpha_r=\"1s\"/>")
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
  expect_accepted("${copy}" "calibrated")

  # alpha_r: written (as the summary says) exactly when the fit was meaningful
  set(fit_ok "pipelined postal model \\[RM §3\\]: alpha_p [^\n]*overlap ratio")
  set(ar_said "updated link class 'core': [^\n]*, alpha_r ([^;,\n]+)")
  if(out MATCHES "${fit_ok}")
    if(NOT out MATCHES "${ar_said}")
      message(FATAL_ERROR "meaningful postal fit, but no alpha_r written:\n${out}")
    endif()
    string(REPLACE "@V@" "${CMAKE_MATCH_1}" ar_text "${ar_fmt}")
    string(FIND "${after}" "${ar_text}" at)
    if(at LESS 0)
      message(FATAL_ERROR "summary says ${ar_text}, ${copy} does not have it:\n${after}")
    endif()
    execute_process(COMMAND "${GEN}" "${copy}" --explain RESULT_VARIABLE rc
                    OUTPUT_VARIABLE explain ERROR_VARIABLE err)
    if(NOT rc EQUAL 0 OR NOT explain MATCHES ", alpha_r [0-9.e+-]+ us")
      message(FATAL_ERROR "treeduce-gen --explain shows no alpha_r for ${copy}:\n${explain}${err}")
    endif()
    message(STATUS "${kind}: alpha_r measured and written (${ar_text})")
  else()
    if(out MATCHES "updated link class 'core': [^\n]*alpha_r" OR after MATCHES "alpha_r")
      message(FATAL_ERROR "no meaningful postal fit, yet alpha_r was written:\n${out}\n${after}")
    endif()
    message(STATUS "${kind}: postal fit not meaningful here; no alpha_r written")
  endif()

  # a second run replaces the comment instead of adding one; the core link now
  # has an alpha_r (1s) above any latency measured here: it is replaced by the
  # measured one or, without a meaningful fit, removed
  string(REGEX REPLACE "${link_re}" "${stale}" staled "${after}")
  file(WRITE "${copy}" "${staled}")
  calibrate(rc out --write "${copy}")
  file(READ "${copy}" again)
  string(REGEX MATCHALL "measured by treeduce-calibrate" marks "${again}")
  list(LENGTH marks nmarks)
  if(NOT rc EQUAL 0 OR NOT nmarks EQUAL 1)
    message(FATAL_ERROR "second calibration of ${copy} (rc ${rc}) left ${nmarks} comments:\n${again}\n${out}")
  endif()
  if(out MATCHES "${fit_ok}")
    set(want_ar "updated link class 'core': [^\n]*, alpha_r ")
    set(ar_did "replaced by the measured one")
  else()
    set(want_ar "updated link class 'core': [^\n]*; its alpha_r was above the new latency and is removed")
    set(ar_did "removed")
  endif()
  string(REGEX REPLACE "[^\n]*measured by treeduce-calibrate on [^\n]*\n" "" again_n "${again}")
  string(REGEX REPLACE "${link_re}" "<CORE>" again_n "${again_n}")
  if(NOT out MATCHES "${want_ar}" OR again MATCHES "alpha_r[ =\"]*1s" OR NOT again_n STREQUAL before_n)
    message(FATAL_ERROR "second calibration of ${copy}: the stale alpha_r 1s was not replaced or "
                        "removed cleanly:\n${again}\n${out}")
  endif()
  expect_accepted("${copy}" "twice calibrated")
  message(STATUS "${kind}: stale alpha_r 1s ${ar_did}")

  # read-only: refused, untouched, no temporary file left behind
  set(ro "${WORK}/ro/calib_one.${kind}")
  file(COPY "${orig}" DESTINATION "${WORK}/ro" FILE_PERMISSIONS OWNER_READ GROUP_READ WORLD_READ)
  calibrate(rc out --write "${ro}")
  file(READ "${ro}" ro_after)
  file(GLOB leftovers "${WORK}/ro/.*" "${WORK}/.*")
  if(NOT rc EQUAL 2 OR NOT ro_after STREQUAL before OR leftovers)
    message(FATAL_ERROR "read-only ${ro}: rc ${rc}, changed or left ${leftovers}:\n${out}")
  endif()
  if(NOT out MATCHES "read-only")
    message(FATAL_ERROR "read-only ${ro}: no clear message:\n${out}")
  endif()
  file(CHMOD "${ro}" PERMISSIONS OWNER_READ OWNER_WRITE GROUP_READ WORLD_READ)

  # a path that does not exist: refused, nothing created
  calibrate(rc out --write "${WORK}/no/such/calib.${kind}")
  if(NOT rc EQUAL 2 OR EXISTS "${WORK}/no" OR NOT out MATCHES "cannot open")
    message(FATAL_ERROR "bad --write path: rc ${rc}:\n${out}")
  endif()
  message(STATUS "${kind}: calibrated, checked and refused as expected")
endforeach()
