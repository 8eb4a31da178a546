# Run at every build (cmake -P): mirrors kibench's data into DEST, the
# build tree's share/kibench, where a binary built there finds it as an
# installed one finds <prefix>/share/kibench (lib/io/data_dir.hpp):
# workloads/ (with the Liger import's KernelIndex tables), LICENSE, NOTICE.
# A file is copied only when it differs, and a file the source no longer
# has is removed, so the mirror lists what the tree holds.
cmake_minimum_required(VERSION 3.24)
foreach(var SOURCE_DIR DEST)
  if(NOT DEFINED ${var})
    message(FATAL_ERROR "sync_data.cmake: ${var} is not set")
  endif()
endforeach()

file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR} ${SOURCE_DIR}/workloads/*)
list(FILTER files EXCLUDE REGEX "__pycache__")
list(APPEND files LICENSE NOTICE)
foreach(file IN LISTS files)
  get_filename_component(folder ${DEST}/${file} DIRECTORY)
  file(MAKE_DIRECTORY ${folder})
  file(COPY_FILE ${SOURCE_DIR}/${file} ${DEST}/${file} ONLY_IF_DIFFERENT)
endforeach()

file(GLOB_RECURSE mirrored RELATIVE ${DEST} ${DEST}/*)
foreach(file IN LISTS mirrored)
  if(NOT file IN_LIST files)
    file(REMOVE ${DEST}/${file})
  endif()
endforeach()
