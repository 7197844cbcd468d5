# kbsim_add_plugin(<name> [OUTPUT_DIR <dir>] [NO_INSTALL] SOURCES <files...>)
#
# Builds one plugin shared library lib<name>.so against the SDK headers only.
# In kbsim's own tree, plugins land in <build>/plugins and are recorded in the
# global list of built plugins (a test checks that every one of them loads).
# In a vendor's tree (after find_package(kbsim)) they land in OUTPUT_DIR, or
# the current binary directory.
function(kbsim_add_plugin name)
  cmake_parse_arguments(ARG "NO_INSTALL" "OUTPUT_DIR" "SOURCES" ${ARGN})
  add_library(${name} MODULE ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE kbsim::sdk)
  target_compile_options(${name} PRIVATE ${KBSIM_WARNINGS})
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
endfunction()
