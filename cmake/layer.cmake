# kvplan_layer(NAME [DEPS lib...]): the static library kvplan_NAME from the
# .cpp files of the calling folder, with src/ on its include path, linking
# DEPS publicly (the layers it may use) and kvplan's warnings privately.
function(kvplan_layer name)
  cmake_parse_arguments(ARG "" "" "DEPS;SOURCES" ${ARGN})
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/*.cpp)
  add_library(kvplan_${name} STATIC ${sources} ${ARG_SOURCES})
  target_include_directories(kvplan_${name} PUBLIC ${PROJECT_SOURCE_DIR}/src)
  target_link_libraries(kvplan_${name} PUBLIC ${ARG_DEPS} PRIVATE kvplan_warnings)
  set_property(GLOBAL APPEND PROPERTY KVPLAN_LAYERS kvplan_${name})
endfunction()
