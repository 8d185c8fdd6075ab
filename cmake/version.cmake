# Writes generated/sim/version.hpp at every build (the lattica_version target), so that the
# commit a binary reports (`sim --version`, the outputs' git_commit, the benchmarks' JSON) is the
# one it was built from, not the one its build directory was configured at. configure_file leaves
# the file alone when nothing changed, so only its few includers recompile after a new commit.
# Inputs: SOURCE_DIR, OUTPUT, PROJECT_VERSION, GIT_EXECUTABLE (may be empty).
set(LATTICA_GIT_COMMIT "unknown")
if(GIT_EXECUTABLE AND EXISTS ${SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD
                  WORKING_DIRECTORY ${SOURCE_DIR} OUTPUT_VARIABLE commit
                  OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  if(commit)
    set(LATTICA_GIT_COMMIT ${commit})
    # Uncommitted changes to tracked files: the binary is not that commit's code.
    execute_process(COMMAND ${GIT_EXECUTABLE} diff --quiet HEAD --
                    WORKING_DIRECTORY ${SOURCE_DIR} RESULT_VARIABLE dirty ERROR_QUIET)
    if(dirty EQUAL 1)
      set(LATTICA_GIT_COMMIT "${commit}-dirty")
    endif()
  endif()
endif()
configure_file(${SOURCE_DIR}/sim/version.hpp.in ${OUTPUT} @ONLY)
