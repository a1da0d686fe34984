# autoshard_add_library(name SOURCES... [DEPENDS tblgen-targets...] [LINK libs...])
# A static library, exported for find_package(autoshard). Libraries that use
# MLIR link the Debian shared libraries MLIR and LLVM (MLIR alone leaves LLVM
# symbols unresolved: "DSO missing from command line").
set_property(GLOBAL PROPERTY AUTOSHARD_EXPORTED_LIBS "")
function(autoshard_add_library name)
  cmake_parse_arguments(ARG "" "" "DEPENDS;LINK" ${ARGN})
  add_library(${name} STATIC ${ARG_UNPARSED_ARGUMENTS})
  set_target_properties(${name} PROPERTIES POSITION_INDEPENDENT_CODE ON)
  target_include_directories(${name} PUBLIC
    $<BUILD_INTERFACE:${PROJECT_SOURCE_DIR}/include>
    $<BUILD_INTERFACE:${PROJECT_BINARY_DIR}/include>
    $<INSTALL_INTERFACE:include>)
  if(ARG_DEPENDS)
    add_dependencies(${name} ${ARG_DEPENDS})
  endif()
  if(ARG_LINK)
    target_link_libraries(${name} PUBLIC ${ARG_LINK})
  endif()
  # Debian's MLIR/LLVM imported targets carry no include directories, so our
  # MLIR-facing libraries publish them for out-of-tree consumers.
  if("MLIR" IN_LIST ARG_LINK OR "LLVM" IN_LIST ARG_LINK)
    foreach(dir ${MLIR_INCLUDE_DIRS} ${LLVM_INCLUDE_DIRS})
      target_include_directories(${name} SYSTEM PUBLIC
        $<BUILD_INTERFACE:${dir}> $<INSTALL_INTERFACE:${dir}>)
    endforeach()
  endif()
  set_property(GLOBAL APPEND PROPERTY AUTOSHARD_EXPORTED_LIBS ${name})
endfunction()
