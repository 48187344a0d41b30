// The one doctest binary: every *_test.cpp in tests/ links into it.
#define DOCTEST_CONFIG_IMPLEMENT_WITH_MAIN
#include <doctest/doctest.h>
