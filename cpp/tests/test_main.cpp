#include <chrono>
#include <cstdio>
#include <cstring>
#include <exception>

#include "test_framework.h"

namespace tinyarena::testing {
namespace {
int current_failures = 0;
}

std::vector<TestCase>& registry() {
  static std::vector<TestCase> tests;
  return tests;
}

void record_failure(const char* file, int line, const std::string& message) {
  ++current_failures;
  std::fprintf(stderr, "  %s:%d: CHECK failed: %s\n", file, line, message.c_str());
}

}  // namespace tinyarena::testing

int main(int argc, char** argv) {
  using namespace tinyarena::testing;
  int passed = 0, failed = 0;
  for (const TestCase& test : registry()) {
    if (argc > 1 && test.name.find(argv[1]) == std::string::npos) continue;
    current_failures = 0;
    const auto start = std::chrono::steady_clock::now();
    try {
      test.body();
    } catch (const std::exception& e) {
      record_failure(__FILE__, __LINE__, std::string("unexpected exception: ") + e.what());
    }
    const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start);
    std::printf("%s %s (%lld ms)\n", current_failures ? "FAIL" : "ok  ", test.name.c_str(),
                static_cast<long long>(elapsed.count()));
    (current_failures ? failed : passed) += 1;
  }
  std::printf("%d passed, %d failed\n", passed, failed);
  return failed == 0 && passed > 0 ? 0 : 1;
}
