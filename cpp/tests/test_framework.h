// A minimal self-registering test framework: TEST(name) { CHECK(...); }.
// tinyarena_tests runs every test (or those whose name contains argv[1]) and
// ends with the line "N passed, M failed".
#pragma once

#include <functional>
#include <sstream>
#include <string>
#include <vector>

namespace tinyarena::testing {

struct TestCase {
  std::string name;
  std::function<void()> body;
};

std::vector<TestCase>& registry();
void record_failure(const char* file, int line, const std::string& message);

struct Registrar {
  Registrar(const char* name, std::function<void()> body) { registry().push_back({name, std::move(body)}); }
};

}  // namespace tinyarena::testing

#define TA_CONCAT_INNER(a, b) a##b
#define TA_CONCAT(a, b) TA_CONCAT_INNER(a, b)
#define TEST(name)                                                                       \
  static void TA_CONCAT(test_, name)();                                                  \
  static ::tinyarena::testing::Registrar TA_CONCAT(registrar_, name)(#name, TA_CONCAT(test_, name)); \
  static void TA_CONCAT(test_, name)()

#define CHECK(condition)                                                                 \
  do {                                                                                   \
    if (!(condition)) ::tinyarena::testing::record_failure(__FILE__, __LINE__, #condition); \
  } while (0)

#define CHECK_EQ(a, b)                                                                   \
  do {                                                                                   \
    const auto& ta_a = (a);                                                              \
    const auto& ta_b = (b);                                                              \
    if (!(ta_a == ta_b)) {                                                               \
      std::ostringstream ta_message;                                                     \
      ta_message << #a << " == " << #b << " (" << ta_a << " vs " << ta_b << ")";         \
      ::tinyarena::testing::record_failure(__FILE__, __LINE__, ta_message.str());        \
    }                                                                                    \
  } while (0)
