// Plan a model from C++ exactly as `tinyarena.plan(MODEL, io=..., input_layout=...)` does
// (plan::run_pipeline), and print the plan as JSON: peak, lower bound, the allocator that won,
// the transforms kept, the op order and every buffer's lifetime, size and offset.
// Built with -DTINYARENA_TESTS=ON as tinyarena_plan_model; tests/test_cpp.py compares its
// output with Python's plan on every committed model.
//
//   tinyarena_plan_model MODEL.tflite [--io int8] [--input-layout nhwc]
#include <cstdio>
#include <exception>
#include <string>

#include "tinyarena/plan/pipeline.h"
#include "tinyarena/reader/tflite_reader.h"

using namespace tinyarena;

namespace {

template <typename List, typename Print>
void print_list(const List& items, Print print) {
  std::printf("[");
  for (size_t i = 0; i < items.size(); ++i) {
    if (i) std::printf(", ");
    print(items[i]);
  }
  std::printf("]");
}

void print_plan(const plan::PipelineResult& result) {
  const plan::Plan& p = result.plan;
  std::printf("{\"peak_bytes\": %lld, \"lower_bound_bytes\": %lld, \"allocation_method\": \"%s\", ",
              static_cast<long long>(p.peak_bytes), static_cast<long long>(p.lower_bound_bytes),
              p.allocation_method.c_str());
  std::printf("\"proven_optimal\": %s, \"transforms_kept\": ", p.proven_optimal ? "true" : "false");
  print_list(result.transforms, [](const plan::TransformReport& t) {
    std::printf("[\"%s\", %s]", t.name.c_str(), t.applied ? "true" : "false");
  });
  std::printf(", \"order\": ");
  print_list(p.liveness.order, [](int32_t op) { std::printf("%d", op); });
  std::printf(", \"buffers\": ");
  print_list(p.problem.buffers, [&, i = size_t{0}](const allocation::Buffer& b) mutable {
    std::printf("[%d, %d, %lld, %lld]", b.first, b.last, static_cast<long long>(b.size),
                static_cast<long long>(p.solution.offsets[i++]));
  });
  std::printf("}\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s MODEL.tflite [--io int8] [--input-layout nhwc]\n", argv[0]);
    return 2;
  }
  plan::PipelineOptions options;
  for (int i = 2; i < argc; ++i) {
    const std::string flag = argv[i], value = i + 1 < argc ? argv[i + 1] : "";
    if (flag == "--io" && value == "int8") {
      options.interface.int8_io = true;
    } else if (flag == "--input-layout" && value == "nhwc") {
      options.interface.nhwc_input = true;
    } else {
      std::fprintf(stderr, "unknown argument %s %s\n", flag.c_str(), value.c_str());
      return 2;
    }
    ++i;
  }
  try {
    print_plan(plan::run_pipeline(reader::read_tflite_file(argv[1]), options));
  } catch (const std::exception& error) {
    std::fprintf(stderr, "error: %s\n", error.what());
    return 1;
  }
  return 0;
}
