# Install tree + CMake package so another project can find_package(autoshard)
# and link autoshard::AutoshardAll (registerAllDialects / registerAllPasses).
include(CMakePackageConfigHelpers)
get_property(_libs GLOBAL PROPERTY AUTOSHARD_EXPORTED_LIBS)
install(TARGETS ${_libs} EXPORT autoshardTargets
  ARCHIVE DESTINATION lib LIBRARY DESTINATION lib RUNTIME DESTINATION bin
  INCLUDES DESTINATION include)
install(DIRECTORY include/autoshard DESTINATION include
  FILES_MATCHING PATTERN "*.h" PATTERN "*.td")
install(DIRECTORY ${PROJECT_BINARY_DIR}/include/autoshard DESTINATION include
  FILES_MATCHING PATTERN "*.inc")
install(EXPORT autoshardTargets NAMESPACE autoshard:: DESTINATION lib/cmake/autoshard)
configure_package_config_file(cmake/autoshardConfig.cmake.in
  ${PROJECT_BINARY_DIR}/autoshardConfig.cmake
  INSTALL_DESTINATION lib/cmake/autoshard)
write_basic_package_version_file(${PROJECT_BINARY_DIR}/autoshardConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/autoshardConfig.cmake
  ${PROJECT_BINARY_DIR}/autoshardConfigVersion.cmake
  DESTINATION lib/cmake/autoshard)
install(TARGETS autoshard-opt RUNTIME DESTINATION bin)
