# Runs ${RIGEL} with ARGS ("|"-separated) and checks its exit code (EXPECT_RC) and its combined
# stdout + stderr (EXPECT_REGEX).
string(REPLACE "|" ";" args "${ARGS}")
execute_process(COMMAND ${RIGEL} ${args} RESULT_VARIABLE rc OUTPUT_VARIABLE out
                ERROR_VARIABLE err)
set(all "${out}${err}")
if(NOT rc STREQUAL "${EXPECT_RC}")
  message(FATAL_ERROR "expected exit code ${EXPECT_RC}, got ${rc}\n--- output ---\n${all}")
endif()
if(NOT all MATCHES "${EXPECT_REGEX}")
  message(FATAL_ERROR "output does not match '${EXPECT_REGEX}'\n--- output ---\n${all}")
endif()
message(STATUS "ok: exit ${rc}\n${all}")
