# What `cmake --install` and `cpack -G DEB` put on a machine: both binaries side by side (so that
# `sonata init` finds sonata-hook), the Claude Code plugin's marketplace under share/sonata (where
# `sonata init --plugin` looks beside the binary), and the manual page written from sonata's own
# help.
include(GNUInstallDirs)

set(sonata_man ${CMAKE_CURRENT_BINARY_DIR}/sonata.1)
add_custom_command(
  OUTPUT ${sonata_man}.gz
  COMMAND ${CMAKE_COMMAND} -DSONATA=$<TARGET_FILE:sonata> -DOUT=${sonata_man}
          -P ${CMAKE_CURRENT_SOURCE_DIR}/cmake/man_page.cmake
  COMMAND gzip -9nf ${sonata_man}
  DEPENDS sonata ${CMAKE_CURRENT_SOURCE_DIR}/cmake/man_page.cmake
  COMMENT "Writing sonata's manual page from its help")
add_custom_target(sonata_man ALL DEPENDS ${sonata_man}.gz)

install(TARGETS sonata sonata-hook RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
install(FILES .claude-plugin/marketplace.json DESTINATION ${CMAKE_INSTALL_DATADIR}/sonata/.claude-plugin)
install(DIRECTORY plugin DESTINATION ${CMAKE_INSTALL_DATADIR}/sonata)
install(FILES ${sonata_man}.gz DESTINATION ${CMAKE_INSTALL_MANDIR}/man1)
install(FILES README.md DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_PACKAGE_NAME sonata)
set(CPACK_PACKAGE_VERSION ${PROJECT_VERSION})
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY
    "hand work to other coding-agent CLIs, never more permissive than the Claude Code session")
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "sonata maintainers")
set(CPACK_PACKAGING_INSTALL_PREFIX /usr)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_STRIP_FILES ON)
# Depends from the binaries' own shared libraries (dpkg-shlibdeps): glibc alone for a portable
# build, Debian's Boost, fmt and toml++ packages otherwise.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# What runs need beyond the binaries: tmux for TUI runs, git for worktree runs.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS "tmux, git")
include(CPack)
