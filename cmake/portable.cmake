# The libraries sonata links, as SONATA_FMT, SONATA_TOML and SONATA_XML. By default the shared
# libraries Debian's packages install. With SONATA_PORTABLE: fmt and toml++ compiled in (their
# header-only forms), libxml2 and what it needs (ICU, lzma, zlib) from their static archives,
# libstdc++ and libgcc linked statically; glibc stays the only shared library.
if(NOT SONATA_PORTABLE)
  set(SONATA_FMT fmt::fmt)
  set(SONATA_TOML tomlplusplus::tomlplusplus)
  set(SONATA_XML LibXml2::LibXml2)
  return()
endif()

set(SONATA_FMT fmt::fmt-header-only)
add_library(sonata_toml_header_only INTERFACE)
target_compile_definitions(sonata_toml_header_only INTERFACE TOML_HEADER_ONLY=1)
set(SONATA_TOML sonata_toml_header_only)

# Each static archive by name; a missing one stops the configuration, naming its package.
function(sonata_static_archive out name package)
  find_library(${out}_path NAMES lib${name}.a)
  if(NOT ${out}_path)
    message(FATAL_ERROR "SONATA_PORTABLE needs lib${name}.a (Debian: apt-get install ${package})")
  endif()
  set(${out} ${${out}_path} PARENT_SCOPE)
endfunction()
sonata_static_archive(xml_a xml2 libxml2-dev)
sonata_static_archive(icui18n_a icui18n libicu-dev)
sonata_static_archive(icuuc_a icuuc libicu-dev)
sonata_static_archive(icudata_a icudata libicu-dev)
sonata_static_archive(lzma_a lzma liblzma-dev)
sonata_static_archive(z_a z zlib1g-dev)
add_library(sonata_xml_static INTERFACE)
target_include_directories(sonata_xml_static INTERFACE ${LIBXML2_INCLUDE_DIRS})
target_link_libraries(sonata_xml_static INTERFACE ${xml_a} ${icui18n_a} ${icuuc_a} ${icudata_a}
                                                  ${lzma_a} ${z_a} m ${CMAKE_DL_LIBS})
set(SONATA_XML sonata_xml_static)

add_link_options(-static-libstdc++ -static-libgcc)
