# The libraries sonata links, as SONATA_FMT and SONATA_TOML. By default the shared libraries
# Debian's packages install. With SONATA_PORTABLE: fmt and toml++ compiled in (their header-only
# forms), libstdc++ and libgcc linked statically; glibc stays the only shared library.
if(NOT SONATA_PORTABLE)
  set(SONATA_FMT fmt::fmt)
  set(SONATA_TOML tomlplusplus::tomlplusplus)
  return()
endif()

set(SONATA_FMT fmt::fmt-header-only)
add_library(sonata_toml_header_only INTERFACE)
target_compile_definitions(sonata_toml_header_only INTERFACE TOML_HEADER_ONLY=1)
set(SONATA_TOML sonata_toml_header_only)

add_link_options(-static-libstdc++ -static-libgcc)
