# dirauth_module(NAME DEPS...): one static library per folder, from the folder's .c files
# (a program's main file, named <program>_main.c, is left out). Skipped while the folder is empty.
# Headers are included by their path from the project root ("schema/note.h"), which names their
# module; scripts/check-layering.sh checks each include against docs/architecture.md.
function(dirauth_module name)
  cmake_parse_arguments(ARG "" "" "DEPS" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.c)
  list(FILTER sources EXCLUDE REGEX "_main\\.c$")
  if(NOT sources)
    return()
  endif()
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${PROJECT_SOURCE_DIR})
  foreach(dep IN LISTS ARG_DEPS)
    if(TARGET ${dep} OR dep MATCHES "::")
      target_link_libraries(${name} PUBLIC ${dep})
    endif()
  endforeach()
  set_property(GLOBAL APPEND PROPERTY DIRAUTH_MODULES ${name})
endfunction()
