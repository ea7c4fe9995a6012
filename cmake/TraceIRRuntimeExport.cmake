# find_package(TraceIRRuntime) for C++ users of the runtime-only build:
# `cmake --install` puts the libraries, the runtime's headers and this
# package under CMAKE_INSTALL_PREFIX; examples/embed/ shows a user.
include(CMakePackageConfigHelpers)
include(GNUInstallDirs)

install(TARGETS TraceIRRuntime TraceIRSupport
  EXPORT TraceIRRuntimeTargets
  ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime
  LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR} COMPONENT runtime)
install(DIRECTORY ${PROJECT_SOURCE_DIR}/include/TraceIR/Runtime
                  ${PROJECT_SOURCE_DIR}/include/TraceIR/Support
  DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/TraceIR COMPONENT runtime
  FILES_MATCHING PATTERN "*.h")
install(EXPORT TraceIRRuntimeTargets NAMESPACE TraceIR::
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/TraceIRRuntime COMPONENT runtime)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/TraceIRRuntimeConfig.cmake.in
  ${PROJECT_BINARY_DIR}/TraceIRRuntimeConfig.cmake
  INSTALL_DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/TraceIRRuntime)
install(FILES ${PROJECT_BINARY_DIR}/TraceIRRuntimeConfig.cmake
  DESTINATION ${CMAKE_INSTALL_LIBDIR}/cmake/TraceIRRuntime COMPONENT runtime)
