# `cmake --install build --prefix P`: the rigel CLI, the static libraries with their public
# headers and a CMake package (find_package(rigel CONFIG) -> rigel::core, rigel::io, rigel::lua),
# the Lua C module, rigel's Lua library (scripts/) and the Lua API stubs (docs/lua/).
# tests/install/ checks the result from a separate build (samples/embed) and with lua5.4.
include(CMakePackageConfigHelpers)

install(TARGETS rigel RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(TARGETS rigel_core rigel_io rigel_lua EXPORT rigelTargets
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(TARGETS rigel_lua_module LIBRARY DESTINATION ${RIGEL_INSTALL_LUA_CMODDIR})

# Public headers, under their source paths: core/ whole (IK and retargeting included); of io, the
# entry points and the formats' writers and readers (not the Assimp reader, the isolation child
# or the scene codec); of the binding, the module entry and the state builder.
install(DIRECTORY ${CMAKE_SOURCE_DIR}/core/ DESTINATION ${RIGEL_INSTALL_INCLUDEDIR}/core
        FILES_MATCHING PATTERN "*.h")
# rigel_install_headers(DIR NAME.h ...): the headers DIR/NAME.h, installed under DIR.
function(rigel_install_headers dir)
  list(TRANSFORM ARGN PREPEND ${CMAKE_SOURCE_DIR}/${dir}/ OUTPUT_VARIABLE files)
  install(FILES ${files} DESTINATION ${RIGEL_INSTALL_INCLUDEDIR}/${dir})
endfunction()
rigel_install_headers(io file_format.h)
rigel_install_headers(importers bone_map.h bvh_reader.h import_error.h load_scene.h scene_facts.h)
rigel_install_headers(exporters atomic_file.h bvh_writer.h fbx_writer.h gltf_writer.h save_scene.h)
rigel_install_headers(bindings/lua lua_module.h rigel_module.h)

install(DIRECTORY ${CMAKE_SOURCE_DIR}/scripts/ DESTINATION ${RIGEL_INSTALL_DATADIR}/scripts
        FILES_MATCHING PATTERN "*.lua")
install(DIRECTORY ${CMAKE_SOURCE_DIR}/docs/lua/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/lua)

install(EXPORT rigelTargets NAMESPACE rigel:: DESTINATION ${RIGEL_INSTALL_CMAKEDIR})
configure_package_config_file(${CMAKE_SOURCE_DIR}/cmake/rigelConfig.cmake.in
                              ${CMAKE_BINARY_DIR}/cmake/rigelConfig.cmake
                              INSTALL_DESTINATION ${RIGEL_INSTALL_CMAKEDIR}
                              PATH_VARS RIGEL_INSTALL_DATADIR RIGEL_INSTALL_LUA_CMODDIR)
write_basic_package_version_file(${CMAKE_BINARY_DIR}/cmake/rigelConfigVersion.cmake
                                 COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_BINARY_DIR}/cmake/rigelConfig.cmake
              ${CMAKE_BINARY_DIR}/cmake/rigelConfigVersion.cmake
        DESTINATION ${RIGEL_INSTALL_CMAKEDIR})
