# Runs tests/lua/escapes.lua under `rigel run` (no --allow-io) after preparing its output folder:
# OUT/inner/ (a folder the script cannot create) and OUT/dangling, a symlink to OUT_escaped that
# does not exist. Then checks the exit code and that OUT_escaped was never created, and bakes the
# escaping glTF the script left (the bake's loader must refuse it too).
#   cmake -DRIGEL=... -DSCRIPT=... -DOUT=... -DSRC=... -DRIG=... -P escapes.cmake
file(REMOVE_RECURSE ${OUT} ${OUT}_escaped ${OUT}_bake)
file(MAKE_DIRECTORY ${OUT}/inner)
file(CREATE_LINK ${OUT}_escaped ${OUT}/dangling SYMBOLIC)
execute_process(COMMAND ${RIGEL} run --out ${OUT} ${SCRIPT} ${SRC} RESULT_VARIABLE rc
                OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "${out}${err}")
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "escapes.lua failed (exit ${rc})")
endif()
if(EXISTS ${OUT}_escaped)
  message(FATAL_ERROR "${OUT}_escaped was created through the dangling symlink")
endif()
execute_process(COMMAND ${RIGEL} bake --no-progress --rig ${RIG} --out ${OUT}_bake
                        --report ${OUT}_bake.json ${OUT}/inner/escape.gltf
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "bake: ${out}${err}")
if(NOT rc STREQUAL "1" OR NOT err MATCHES "could not open referenced file \"../outside.bin\"")
  message(FATAL_ERROR "rigel bake must fail the escaping glTF (exit ${rc})")
endif()
