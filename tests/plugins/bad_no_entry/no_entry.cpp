// A shared library that is not a kbsim plugin: it has no entry point.
extern "C" int kbsim_test_not_a_plugin() { return 42; }
