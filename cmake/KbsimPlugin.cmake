# kbsim_add_plugin(<name> [OUTPUT_DIR <dir>] [NO_INSTALL] SOURCES <files...>
#                  [LIBS <libraries...>] [TESTS <test files...>] [TEST_LIBS <libraries...>])
#
# Builds one plugin shared library lib<name>.so against the SDK headers only.
# LIBS: the SDK kits it uses (kbsim::pe, kbsim::ahbm, ...) and any other
# library (Boost::context, Eigen3::Eigen, ...).
# In kbsim's own tree, plugins land in <build>/plugins and are recorded in the
# global list of built plugins (a test checks that every one of them loads).
# In a vendor's tree (after find_package(kbsim)) they land in OUTPUT_DIR, or
# the current binary directory.
#
# TESTS: GoogleTest files beside the plugin, built into one executable
# <name>_tests together with the plugin's own sources (so a test can reach
# its internals) and the component-test harness (kbsim/testing.hpp), and
# registered with ctest. Skipped when testing is off (KBSIM_BUILD_TESTS=OFF,
# or no GTest found). TEST_LIBS: extra libraries for that executable.
function(kbsim_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIR" "SOURCES;LIBS;TESTS;TEST_LIBS" ${ARGN})
  add_library(${name}_objects OBJECT ${ARG_SOURCES})
  set_target_properties(${name}_objects PROPERTIES POSITION_INDEPENDENT_CODE ON CXX_VISIBILITY_PRESET hidden
                                                   VISIBILITY_INLINES_HIDDEN ON)
  target_link_libraries(${name}_objects PUBLIC kbsim::sdk ${ARG_LIBS})
  target_compile_options(${name}_objects PRIVATE ${KBSIM_WARNINGS})
  if(TARGET kbsim_plugin_pch)  # kbsim's own tree: the shared precompiled header (plugins/CMakeLists.txt)
    target_precompile_headers(${name}_objects REUSE_FROM kbsim_plugin_pch)
  endif()
  add_library(${name} MODULE $<TARGET_OBJECTS:${name}_objects>)
  target_link_libraries(${name} PRIVATE kbsim::sdk ${ARG_LIBS})
  if(NOT ARG_OUTPUT_DIR)
    if(DEFINED KBSIM_PLUGIN_OUTPUT_DIR)
      set(ARG_OUTPUT_DIR "${KBSIM_PLUGIN_OUTPUT_DIR}")
      set_property(GLOBAL APPEND PROPERTY KBSIM_BUILT_PLUGINS "$<TARGET_FILE:${name}>")
      set_property(GLOBAL APPEND PROPERTY KBSIM_PLUGIN_TARGETS ${name})
    else()
      set(ARG_OUTPUT_DIR "${CMAKE_CURRENT_BINARY_DIR}")
    endif()
  endif()
  set_target_properties(${name} PROPERTIES LIBRARY_OUTPUT_DIRECTORY "${ARG_OUTPUT_DIR}")
  if(NOT ARG_NO_INSTALL)
    if(NOT DEFINED KBSIM_PLUGIN_INSTALL_DIR)
      set(KBSIM_PLUGIN_INSTALL_DIR "lib/kbsim/plugins")
    endif()
    install(TARGETS ${name} LIBRARY DESTINATION ${KBSIM_PLUGIN_INSTALL_DIR})
  endif()
  if(ARG_TESTS AND TARGET GTest::gmock_main AND NOT KBSIM_BUILD_TESTS STREQUAL "OFF")
    add_executable(${name}_tests ${ARG_TESTS} $<TARGET_OBJECTS:${name}_objects>)
    target_include_directories(${name}_tests PRIVATE ${CMAKE_CURRENT_SOURCE_DIR})
    if(DEFINED KBSIM_PLUGIN_OUTPUT_DIR)  # kbsim's own tree: the harness plus the engine (tests/support)
      target_link_libraries(${name}_tests PRIVATE kbsim_test_support)
    else()  # a vendor's tree: the installed harness
      target_link_libraries(${name}_tests PRIVATE kbsim::testing)
    endif()
    target_link_libraries(${name}_tests PRIVATE ${name}_objects GTest::gmock_main ${ARG_TEST_LIBS})
    target_compile_options(${name}_tests PRIVATE ${KBSIM_WARNINGS})
    set_property(GLOBAL APPEND PROPERTY KBSIM_TEST_TARGETS ${name}_tests)
    gtest_discover_tests(${name}_tests WORKING_DIRECTORY ${CMAKE_CURRENT_BINARY_DIR} DISCOVERY_TIMEOUT 60)
  endif()
endfunction()
