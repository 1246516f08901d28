// LeakSanitizer's built-in suppressions for the sanitizer build (-DSERVESIM_SANITIZE=ON).
// `compare --plot` draws with cairo, whose fontconfig keeps its font caches until exit by
// design (it frees them only in FcFini, which cairo never calls); LeakSanitizer reports them
// as leaks and turns a correct run's exit status into 1. Only that library is suppressed, so
// a leak in servesim's own code still fails the run. Compiled empty in other builds.
#if defined(__SANITIZE_ADDRESS__)
extern "C" const char* __lsan_default_suppressions() {
  return "leak:libfontconfig.so\n";
}
#endif
