# Install and packaging: `cmake --install` puts the binary, the catalogs, a
# man page generated from the help text, the bash completion and the docs in
# the usual places; `cpack -G DEB` builds a .deb for Debian 12.
include(GNUInstallDirs)

set(KVPLAN_MANPAGE "${PROJECT_BINARY_DIR}/kvplan.1")
add_custom_command(
  OUTPUT "${KVPLAN_MANPAGE}"
  COMMAND "${CMAKE_COMMAND}" -DKVPLAN=$<TARGET_FILE:kvplan> -DOUTPUT=${KVPLAN_MANPAGE}
          -DVERSION=${PROJECT_VERSION} -P "${PROJECT_SOURCE_DIR}/cmake/manpage.cmake"
  DEPENDS kvplan "${PROJECT_SOURCE_DIR}/cmake/manpage.cmake"
  COMMENT "Generating kvplan.1 from kvplan --help")
add_custom_target(kvplan_manpage ALL DEPENDS "${KVPLAN_MANPAGE}")

install(TARGETS kvplan RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(DIRECTORY models/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kvplan/models
        FILES_MATCHING PATTERN "*.yaml")
install(DIRECTORY hardware/ DESTINATION ${CMAKE_INSTALL_DATADIR}/kvplan/hardware
        FILES_MATCHING PATTERN "*.yaml")
install(FILES "${KVPLAN_MANPAGE}" DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES packaging/kvplan.bash DESTINATION ${CMAKE_INSTALL_DATADIR}/bash-completion/completions
        RENAME kvplan)
install(DIRECTORY examples/ DESTINATION ${CMAKE_INSTALL_DOCDIR}/examples FILES_MATCHING PATTERN "*.yaml")
install(FILES docs/deploy-config.md docs/ci.md DESTINATION ${CMAKE_INSTALL_DOCDIR} OPTIONAL)

# The .deb: Debian 12 package names for the shared libraries kvplan links
# (CLI11 is header-only).
set(CPACK_GENERATOR "DEB")
set(CPACK_PACKAGE_NAME "kvplan")
set(CPACK_PACKAGE_VENDOR "kvplan")
set(CPACK_PACKAGE_CONTACT "kvplan maintainers <kvplan@example.invalid>")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION "devel")
set(CPACK_DEBIAN_PACKAGE_DEPENDS "libc6 (>= 2.34), libstdc++6 (>= 12), libgcc-s1, libfmt9, libyaml-cpp0.7, libcurl4")
set(CPACK_PACKAGING_INSTALL_PREFIX "/usr")
set(CPACK_STRIP_FILES ON)
include(CPack)

if(KVPLAN_BUILD_TESTS)
  # Installs into a scratch prefix, runs the installed binary from elsewhere,
  # checks the man page and completion; then builds the .deb, unpacks it with
  # dpkg-deb -x into a scratch root and runs `kvplan size` from there.
  add_test(NAME kvplan_install
           COMMAND "${CMAKE_COMMAND}" -DBUILD=${PROJECT_BINARY_DIR}
                   -DSCRATCH=${PROJECT_BINARY_DIR}/install-test
                   -P "${PROJECT_SOURCE_DIR}/cmake/install_test.cmake")
  set_tests_properties(kvplan_install PROPERTIES LABELS "install")
endif()
