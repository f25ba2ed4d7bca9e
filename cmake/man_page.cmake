# cmake -DSONATA=<the sonata binary> -DOUT=<sonata.1> -P cmake/man_page.cmake
# Writes sonata's manual page from its own help: the program's --help, then every subcommand's
# --help, each kept as printed. A subcommand whose help cannot be printed stops the build.
function(help_of out)
  execute_process(COMMAND ${SONATA} ${ARGN} --help OUTPUT_VARIABLE text RESULT_VARIABLE rc
                  ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "sonata ${ARGN} --help failed (${rc}): ${err}")
  endif()
  string(REPLACE "${SONATA}" "sonata" text "${text}")
  # roff: a backslash is \e, and a line may not start with a control character.
  string(REPLACE "\\" "\\e" text "${text}")
  string(REGEX REPLACE "(^|\n)([.'])" "\\1\\\\&\\2" text "${text}")
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

help_of(top)
execute_process(COMMAND ${SONATA} --version OUTPUT_VARIABLE version OUTPUT_STRIP_TRAILING_WHITESPACE)
string(REGEX MATCH "^[^\n]*" summary "${top}")
string(REGEX REPLACE "^sonata [^ ]+ " "" summary "${summary}")

string(REGEX MATCH "\nSubcommands:\n.*" listed "${top}")
string(REGEX MATCHALL "\n  [a-z][a-z-]*" names "${listed}")

set(page ".TH SONATA 1 \"\" \"${version}\" \"User Commands\"\n.SH NAME\nsonata \\- ${summary}\n")
string(APPEND page ".SH SYNOPSIS\n.B sonata\n[\\fIOPTIONS\\fR] \\fICOMMAND\\fR [\\fIARGS\\fR]\n")
string(APPEND page ".SH DESCRIPTION\n.nf\n${top}.fi\n.SH COMMANDS\n")
foreach(name IN LISTS names)
  string(STRIP "${name}" name)
  help_of(text ${name})
  string(APPEND page ".SS sonata ${name}\n.nf\n${text}.fi\n")
endforeach()
string(APPEND page ".SH FILES\n.nf\nsonata.toml or \\&.sonata/config.toml: a project's config\n")
string(APPEND page "$XDG_CONFIG_HOME/sonata/config.toml (~/.config/sonata/config.toml): the machine's\n")
string(APPEND page "\\&.sonata/runs/: a project's runs\n.fi\n")
file(WRITE "${OUT}" "${page}")
