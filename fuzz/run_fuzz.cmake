# Runs one libFuzzer target for CTest from a fresh work corpus, so a run depends only on the
# code, the checked-in corpus and the seed (KILN_FUZZ_SEED): CI's run can be replayed exactly.
# On a finding it prints the report's last lines and where the crashing input was saved.
#   cmake -DFUZZER=... -DWORK=... -DSEED_CORPUS=... -DSEED=... -DRUNS=... -DSECONDS=... -P run_fuzz.cmake
file(REMOVE_RECURSE "${WORK}")
file(MAKE_DIRECTORY "${WORK}/corpus" "${WORK}/artifacts")
execute_process(
  COMMAND "${FUZZER}" -seed=${SEED} -runs=${RUNS} -max_total_time=${SECONDS} -timeout=20 -rss_limit_mb=3072
          -print_final_stats=1 "-artifact_prefix=${WORK}/artifacts/" "${WORK}/corpus" "${SEED_CORPUS}"
  RESULT_VARIABLE status
  OUTPUT_VARIABLE output
  ERROR_VARIABLE output)
string(LENGTH "${output}" length)
if(status EQUAL 0)
  string(REGEX MATCH "stat::number_of_executed_units: [0-9]+" runs_done "${output}")
  message(STATUS "fuzz: seed ${SEED}, ${runs_done}, no finding")
  return()
endif()
# The report is at the end; libFuzzer's progress lines before it are noise here.
if(length GREATER 6000)
  math(EXPR start "${length} - 6000")
  string(SUBSTRING "${output}" ${start} -1 output)
endif()
file(GLOB saved "${WORK}/artifacts/*")
message("${output}")
message(FATAL_ERROR "fuzz: finding with seed ${SEED} (exit ${status}); input saved as ${saved}. "
                    "Replay: ${FUZZER} ${saved}")
