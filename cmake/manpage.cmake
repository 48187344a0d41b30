# Writes kvplan.1 (roff) from the program's own help text, so the man page
# never drifts from `kvplan --help`. Run as:
#   cmake -DKVPLAN=<kvplan binary> -DOUTPUT=<kvplan.1> -DVERSION=<x.y.z> -P manpage.cmake
execute_process(COMMAND "${KVPLAN}" --help OUTPUT_VARIABLE main RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "kvplan --help failed (${rc})")
endif()

# roff: backslashes become \e; a line starting with . or ' is protected with \&.
function(roff_escape text out)
  string(REPLACE "\\" "\\e" text "${text}")
  string(PREPEND text "\n")
  string(REPLACE "\n." "\n\\&." text "${text}")
  string(REPLACE "\n'" "\n\\&'" text "${text}")
  string(SUBSTRING "${text}" 1 -1 text)
  set(${out} "${text}" PARENT_SCOPE)
endfunction()

# Subcommand names: the first word of each line of the "Subcommands:" block.
string(REGEX MATCH "Subcommands:\n([^\n]+\n)+" block "${main}")
string(REPLACE "\n" ";" lines "${block}")
set(commands "")
foreach(line IN LISTS lines)
  if(line MATCHES "^  ([a-z][a-z0-9.-]*) ")
    list(APPEND commands "${CMAKE_MATCH_1}")
  endif()
endforeach()

roff_escape("${main}" main_roff)
set(page ".TH KVPLAN 1 \"\" \"kvplan ${VERSION}\" \"User Commands\"
.SH NAME
kvplan \\- KV-cache memory and capacity planner for LLM serving
.SH SYNOPSIS
.B kvplan
.I SUBCOMMAND
.RI [ OPTIONS ]
.SH DESCRIPTION
kvplan answers how much KV cache a model needs, how many requests an engine
(vLLM, SGLang, TensorRT-LLM, llama.cpp) holds on a GPU, and gates deployment
configs in CI. Each subcommand's help follows.
.PP
.nf
${main_roff}
.fi
.SH COMMANDS
")
foreach(cmd IN LISTS commands)
  execute_process(COMMAND "${KVPLAN}" ${cmd} --help OUTPUT_VARIABLE help RESULT_VARIABLE rc)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "kvplan ${cmd} --help failed (${rc})")
  endif()
  roff_escape("${help}" help_roff)
  string(APPEND page ".SS ${cmd}\n.nf\n${help_roff}\n.fi\n")
endforeach()
string(APPEND page ".SH FILES
.TP
.I /usr/share/kvplan/models, /usr/share/kvplan/hardware
Copies of the bundled model and accelerator catalogs (the binary carries
them too; a path given on the command line always wins).
.TP
.I /usr/share/doc/kvplan/examples
Example deployment configs for
.BR \"kvplan check\" .
.SH EXIT STATUS
0 success, 1 a check failed, 2 bad input or usage.
.SH SEE ALSO
docs/deploy-config.md and docs/ci.md in the kvplan sources.
")
set(old "")
if(EXISTS "${OUTPUT}")
  file(READ "${OUTPUT}" old)
endif()
if(NOT old STREQUAL page)
  file(WRITE "${OUTPUT}" "${page}")
endif()
