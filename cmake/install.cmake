# The installed package: every library a layer installed (flynn_library(... INSTALL)) in
# flynnTargets, and the package files find_package(flynn CONFIG) reads. Each layer installs
# its own headers.
include(CMakePackageConfigHelpers)
set(FLYNN_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/flynn)
install(EXPORT flynnTargets NAMESPACE flynn:: DESTINATION ${FLYNN_CMAKE_DIR})
set(FLYNN_CONFIG_WITH_FAISS ${FLYNN_HAVE_FAISS})
configure_package_config_file(${PROJECT_SOURCE_DIR}/cmake/flynnConfig.cmake.in
  ${PROJECT_BINARY_DIR}/flynnConfig.cmake INSTALL_DESTINATION ${FLYNN_CMAKE_DIR})
write_basic_package_version_file(${PROJECT_BINARY_DIR}/flynnConfigVersion.cmake
  VERSION ${PROJECT_VERSION} COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/flynnConfig.cmake ${PROJECT_BINARY_DIR}/flynnConfigVersion.cmake
        DESTINATION ${FLYNN_CMAKE_DIR})
