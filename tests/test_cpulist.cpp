#include <doctest/doctest.h>

#include <stdexcept>

#include "sim/machine/cpulist.h"

using namespace slubsim;

TEST_CASE("cpulist: lscpu syntax parses into sorted ids") {
  CHECK(parse_cpulist("3") == std::vector<int>{3});
  CHECK(parse_cpulist("0-3") == std::vector<int>{0, 1, 2, 3});
  CHECK(parse_cpulist("4,0-1") == std::vector<int>{0, 1, 4});
  auto gnr = parse_cpulist("0-42,172-214");
  CHECK(gnr.size() == 86);
  CHECK(gnr.front() == 0);
  CHECK(gnr[43] == 172);
  CHECK(format_cpulist(gnr) == "0-42,172-214");
  CHECK(format_cpulist({0, 2, 3, 4, 9}) == "0,2-4,9");
}

TEST_CASE("cpulist: malformed lists are rejected with a reason") {
  CHECK_THROWS_AS(parse_cpulist(""), std::invalid_argument);
  CHECK_THROWS_AS(parse_cpulist("0-"), std::invalid_argument);
  CHECK_THROWS_AS(parse_cpulist("5-2"), std::invalid_argument);
  CHECK_THROWS_AS(parse_cpulist("1,,2"), std::invalid_argument);
  CHECK_THROWS_AS(parse_cpulist("a-b"), std::invalid_argument);
  CHECK_THROWS_AS(parse_cpulist("-1"), std::invalid_argument);
  CHECK_THROWS_WITH_AS(parse_cpulist("0-9000", 4095), doctest::Contains("above 4095"),
                       std::invalid_argument);
}
