include(GNUInstallDirs)

# flynn_library(<target> [INSTALL] [PUBLIC_INCLUDES <dirs>...] SOURCES <files>...)
#
# One of flynn's static libraries, made the same way in every layer: flynn::<name> as an
# alias (flynn_core is flynn::core), position-independent (the Python module links it),
# with its PUBLIC_INCLUDES, reaching the library's internal headers under src/ privately, and
# with INSTALL exported in flynnTargets (cmake/install.cmake writes the package files).
function(flynn_library target)
  cmake_parse_arguments(L "INSTALL" "" "PUBLIC_INCLUDES;SOURCES" ${ARGN})
  string(REGEX REPLACE "^flynn_" "" export_name ${target})
  add_library(${target} STATIC ${L_SOURCES})
  add_library(flynn::${export_name} ALIAS ${target})
  if(L_PUBLIC_INCLUDES)
    target_include_directories(${target} PUBLIC ${L_PUBLIC_INCLUDES})
  endif()
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/src)
  set_target_properties(${target} PROPERTIES EXPORT_NAME ${export_name} POSITION_INDEPENDENT_CODE ON)
  if(L_INSTALL)
    install(TARGETS ${target} EXPORT flynnTargets
            ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
            LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
            INCLUDES DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
  endif()
endfunction()
