// kiln_test_support's objects are compiled with doctest's header (their precompiled header), so
// each registers with doctest's test registry at start-up: this program, no doctest suite, links
// doctest's implementation for them (and never runs it).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>
