# cmake -DPAGE=<man page> -DVERSION=<x.y.z> [-DHELP=<command;args printing --help>]
#       -P check_man_options.cmake
#
# The page's title line names treeduce VERSION.  With HELP, the options of the
# page are the program's: every long option on an option line of its --help (a
# line starting with blanks and '-') is in the page, as roff writes it
# (\-\-name), and every option a .TP entry of the page's OPTIONS section names
# is one --help gives.
file(READ "${PAGE}" page)
if(NOT page MATCHES "^[.]TH [^\n]*\"treeduce ${VERSION}\"")
  string(REGEX MATCH "^[^\n]*" th "${page}")
  message(FATAL_ERROR "${PAGE}: the title line '${th}' does not name treeduce ${VERSION}")
endif()
if(NOT HELP)
  message(STATUS "${PAGE}: treeduce ${VERSION}")
  return()
endif()

execute_process(COMMAND ${HELP} OUTPUT_VARIABLE help ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0 OR help STREQUAL "")
  message(FATAL_ERROR "${HELP}: exit ${rc}, no usage printed\n${err}")
endif()

set(help_opts "")
string(REPLACE "\n" ";" help_lines "${help}")
foreach(line IN LISTS help_lines)
  if(line MATCHES "^ +-")
    string(REGEX MATCHALL "--[a-z][a-z0-9-]*" found "${line}")
    list(APPEND help_opts ${found})
  endif()
endforeach()
list(REMOVE_DUPLICATES help_opts)
list(LENGTH help_opts n)
if(n LESS 3)
  message(FATAL_ERROR "only ${n} long options found in the --help of ${HELP}: ${help_opts}")
endif()

# roff: \- is a minus; the page's long options in words.
string(REPLACE "\\-" "-" text "${page}")
set(missing "")
foreach(opt IN LISTS help_opts)
  if(NOT text MATCHES "${opt}([^a-z0-9-]|$)")
    list(APPEND missing ${opt})
  endif()
endforeach()

# The OPTIONS section's entries: the line after each .TP.
set(extra "")
if(NOT text MATCHES "\n\\.SH OPTIONS\n(.*)")
  message(FATAL_ERROR "${PAGE}: no OPTIONS section")
endif()
set(section "${CMAKE_MATCH_1}")
if(section MATCHES "^(.*)\n\\.SH ")
  set(section "${CMAKE_MATCH_1}")
endif()
string(REGEX MATCHALL "\\.TP\n[^\n]*" entries "${section}")
foreach(entry IN LISTS entries)
  string(REGEX MATCHALL "--[a-z][a-z0-9-]*" found "${entry}")
  foreach(opt IN LISTS found)
    list(FIND help_opts ${opt} at)
    if(at LESS 0)
      list(APPEND extra ${opt})
    endif()
  endforeach()
endforeach()

if(missing OR extra)
  message(FATAL_ERROR "${PAGE}: options of --help missing from the page: ${missing}; "
                      "options the page lists that --help does not: ${extra}")
endif()
message(STATUS "${PAGE}: all ${n} long options of --help documented: ${help_opts}")
