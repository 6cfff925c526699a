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
# A glTF whose buffer uri names a file in its own folder that is a hard link to a file outside it
# (issue 25: it loaded the outside file's bytes). Refused by the loader, by the link count.
file(READ ${OUT}/inner/ok.gltf gltf)
string(REPLACE "\"ok.bin\"" "\"linked.bin\"" gltf "${gltf}")
file(WRITE ${OUT}/inner/linked.gltf "${gltf}")
file(REMOVE ${OUT}/inner/linked.bin)
file(CREATE_LINK ${OUT}/outside.bin ${OUT}/inner/linked.bin)
execute_process(COMMAND ${RIGEL} info ${OUT}/inner/linked.gltf
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
message(STATUS "info linked.gltf: ${out}${err}")
if(NOT rc STREQUAL "1" OR NOT err MATCHES "linked\\.bin' has more than one link")
  message(FATAL_ERROR "a buffer uri that is a hard link must be refused (exit ${rc})")
endif()
execute_process(COMMAND ${RIGEL} info ${OUT}/inner/ok.gltf RESULT_VARIABLE rc OUTPUT_QUIET
                ERROR_QUIET)
if(NOT rc STREQUAL "0")
  message(FATAL_ERROR "control: ok.gltf (its buffer a file of one link) must load (exit ${rc})")
endif()
