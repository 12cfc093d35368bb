# scale_timeouts.cmake — included at the end of every test directory's CMakeLists.txt.
# Under a sanitizer everything runs several times slower (TSan: 5-15x), and `make check` runs the
# sanitizer stages beside whatever else the machine does: a TIMEOUT (a hang bound) that holds for
# the plain build is tripled there, so a slow pass is not reported as a hang (interpose.enforce
# under TSan, with load beside it, once took more than its 300 s while still passing its checks).
if(CONVGPU_SANITIZE)
  get_directory_property(convgpu_dir_tests TESTS)
  foreach(t IN LISTS convgpu_dir_tests)
    get_test_property(${t} TIMEOUT limit)
    if(limit)
      math(EXPR limit "${limit} * 3")
      set_tests_properties(${t} PROPERTIES TIMEOUT ${limit})
    endif()
  endforeach()
endif()
