// Read-only numpy arrays: copies of small vectors, or views that keep
// their owner alive.
#pragma once

#include <pybind11/numpy.h>

#include <vector>

namespace tinyarena::bindings {

inline void make_readonly(pybind11::array& array) { array.attr("setflags")(pybind11::arg("write") = false); }

template <typename T>
pybind11::array_t<T> readonly_array(const std::vector<T>& values) {
  pybind11::array_t<T> array(static_cast<pybind11::ssize_t>(values.size()), values.data());
  make_readonly(array);
  return array;
}

}  // namespace tinyarena::bindings
