#include "tinyarena/common/deep_stack.h"

#include <pthread.h>

#include <exception>
#include <stdexcept>

namespace tinyarena {
namespace {

constexpr size_t kDeepStackBytes = size_t{1} << 30;
constexpr size_t kShallowBuffers = 128;  // up to this many, the caller's stack will do
thread_local bool on_a_deep_stack = false;  // this thread is one run_on_deep_stack started

struct Job {
  const std::function<void()>* work;
  std::exception_ptr error;
};

void* run_job(void* argument) {
  Job& job = *static_cast<Job*>(argument);
  on_a_deep_stack = true;
  try {
    (*job.work)();
  } catch (...) {
    job.error = std::current_exception();
  }
  return nullptr;
}

}  // namespace

void run_on_deep_stack(size_t buffers, const std::function<void()>& work) {
  if (on_a_deep_stack || buffers <= kShallowBuffers) return work();
  Job job{&work, nullptr};
  pthread_attr_t attributes;
  pthread_attr_init(&attributes);
  pthread_attr_setstacksize(&attributes, kDeepStackBytes);
  pthread_t thread;
  const int failed = pthread_create(&thread, &attributes, run_job, &job);
  pthread_attr_destroy(&attributes);
  if (failed) throw std::runtime_error("cannot start a search thread with a 1 GiB stack");
  pthread_join(thread, nullptr);
  if (job.error) std::rethrow_exception(job.error);
}

}  // namespace tinyarena
