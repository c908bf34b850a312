# Installed CMake package: find_package(karma) gives karma::core and the
# mini-app executables, with the dependencies found again on the user's side.
include(CMakePackageConfigHelpers)
set(KARMA_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/karma)
install(EXPORT karmaTargets NAMESPACE karma:: DESTINATION ${KARMA_CMAKE_DIR})
configure_package_config_file(
  "${CMAKE_CURRENT_LIST_DIR}/karmaConfig.cmake.in"
  "${PROJECT_BINARY_DIR}/karmaConfig.cmake"
  INSTALL_DESTINATION ${KARMA_CMAKE_DIR})
write_basic_package_version_file("${PROJECT_BINARY_DIR}/karmaConfigVersion.cmake"
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES "${PROJECT_BINARY_DIR}/karmaConfig.cmake"
              "${PROJECT_BINARY_DIR}/karmaConfigVersion.cmake"
        DESTINATION ${KARMA_CMAKE_DIR})
