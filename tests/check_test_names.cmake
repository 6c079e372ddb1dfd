# Runs after kiln_tests links, before doctest's test discovery: CTest registers tests through
# CMake lists, where an unbalanced '[' or ']' in a test name merges it with its neighbours and
# breaks every test after it, and a ';' cuts the name, so the test runs a filter that matches
# nothing and passes without running. Fail the build naming the test instead.
execute_process(COMMAND "${TEST_EXECUTABLE}" --list-test-cases --no-version
  OUTPUT_VARIABLE out RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "${TEST_EXECUTABLE} --list-test-cases failed (${rc})")
endif()
# Neutralize brackets before splitting into lines, then count them per line.
string(REPLACE "[" "<lb>" out "${out}")
string(REPLACE "]" "<rb>" out "${out}")
string(REPLACE ";" "<sc>" out "${out}")
string(REPLACE "\n" ";" lines "${out}")
set(bad "")
foreach(line IN LISTS lines)
  string(REGEX MATCHALL "<lb>" opens "${line}")
  string(REGEX MATCHALL "<rb>" closes "${line}")
  list(LENGTH opens n_open)
  list(LENGTH closes n_close)
  if((NOT n_open EQUAL n_close OR line MATCHES "<sc>") AND NOT line MATCHES "^<lb>doctest<rb>")
    string(REPLACE "<lb>" "[" line "${line}")
    string(REPLACE "<rb>" "]" line "${line}")
    string(REPLACE "<sc>" ";" line "${line}")
    string(APPEND bad "\n  \"${line}\"")
  endif()
endforeach()
if(bad)
  message(FATAL_ERROR "test names with unbalanced brackets or a ';' cannot be registered with CTest "
    "(use parentheses, balance the brackets, write ',' for ';'):${bad}")
endif()
