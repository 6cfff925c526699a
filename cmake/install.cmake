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
install(FILES ${CMAKE_SOURCE_DIR}/io/file_format.h DESTINATION ${RIGEL_INSTALL_INCLUDEDIR}/io)
install(FILES
        ${CMAKE_SOURCE_DIR}/importers/bone_map.h
        ${CMAKE_SOURCE_DIR}/importers/bvh_reader.h
        ${CMAKE_SOURCE_DIR}/importers/import_error.h
        ${CMAKE_SOURCE_DIR}/importers/load_scene.h
        DESTINATION ${RIGEL_INSTALL_INCLUDEDIR}/importers)
install(FILES
        ${CMAKE_SOURCE_DIR}/exporters/atomic_file.h
        ${CMAKE_SOURCE_DIR}/exporters/bvh_writer.h
        ${CMAKE_SOURCE_DIR}/exporters/fbx_writer.h
        ${CMAKE_SOURCE_DIR}/exporters/gltf_writer.h
        ${CMAKE_SOURCE_DIR}/exporters/save_scene.h
        DESTINATION ${RIGEL_INSTALL_INCLUDEDIR}/exporters)
install(FILES
        ${CMAKE_SOURCE_DIR}/bindings/lua/lua_module.h
        ${CMAKE_SOURCE_DIR}/bindings/lua/rigel_module.h
        DESTINATION ${RIGEL_INSTALL_INCLUDEDIR}/bindings/lua)

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
