// The translation unit that builds the plugins' precompiled header (plugins/CMakeLists.txt); nothing else.
