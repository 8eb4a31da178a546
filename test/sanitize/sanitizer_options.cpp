// The sanitizers' options for kibench-sanitized and kibench_tests_sanitized
// (test/CMakeLists.txt, ctest label "sanitize"), compiled in so that ctest,
// a shell and a debugger run them alike. Every report stops the process
// with exit code 99, which no kibench command uses: a report can never pass
// for a failed check (1) or refused input (2) that a test expects.
// protect_shadow_gap=0 lets the CUDA runtime map its memory where ASan
// would otherwise reserve it (on a machine with a GPU).

extern "C" const char *__asan_default_options() {
  return "halt_on_error=1:exitcode=99:detect_stack_use_after_return=1:check_initialization_order=1:"
         "strict_init_order=1:detect_leaks=1:protect_shadow_gap=0";
}

extern "C" const char *__ubsan_default_options() {
  return "halt_on_error=1:exitcode=99:print_stacktrace=1";
}

extern "C" const char *__lsan_default_options() {
  return "exitcode=99";
}
