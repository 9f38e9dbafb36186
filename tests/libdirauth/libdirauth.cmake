# libdirauth's tests, through its public header and its shared library: the unit test with the
# example chain's vectors, the scenarios against a real authority, the exported symbols, an
# install linked from a separate project through pkg-config, and the fuzz targets.
set(libdirauth_client_support ${CMAKE_CURRENT_SOURCE_DIR}/support/test_libdirauth_client.c)
target_sources(check_libdirauth PRIVATE ${libdirauth_client_support})
target_link_libraries(check_libdirauth PRIVATE dirauth)
# The offline check of a proof file (dirauth_verify_proof_file), through the same library.
target_link_libraries(check_libdirauth_proof PRIVATE dirauth)
if(TARGET test_libdirauth)
  target_sources(test_libdirauth PRIVATE ${libdirauth_client_support})
  target_link_libraries(test_libdirauth PRIVATE dirauth)
  add_dependencies(test_libdirauth dirauthctl dirauthd dirauth-signer dirauth-resolver-example)
endif()
add_test(NAME libdirauth_symbols
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/libdirauth/check_symbols.sh $<TARGET_FILE:dirauth>
          ${PROJECT_SOURCE_DIR}/libdirauth/include/dirauth/dirauth.h)
# A sanitizer build's library needs its runtime in the program that loads it: the separate project
# is compiled with the same sanitizer.
set(libdirauth_user_flags "")
if(DIRAUTH_SANITIZE)
  set(libdirauth_user_flags "-fsanitize=address,undefined")
elseif(DIRAUTH_TSAN)
  set(libdirauth_user_flags "-fsanitize=thread")
endif()
add_test(NAME test_libdirauth_pkgconfig
  COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/integration/test_libdirauth_pkgconfig.sh ${PROJECT_BINARY_DIR}
          ${PROJECT_SOURCE_DIR} "${libdirauth_user_flags}")
set_tests_properties(test_libdirauth_pkgconfig PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
if(DIRAUTH_FUZZ)
  file(GLOB libdirauth_fuzz_targets CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/fuzz/fuzz_libdirauth_*.c)
  foreach(source IN LISTS libdirauth_fuzz_targets)
    get_filename_component(name ${source} NAME_WE)
    target_link_libraries(${name} PRIVATE dirauth)
    target_compile_definitions(${name} PRIVATE DIRAUTH_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  endforeach()
endif()
