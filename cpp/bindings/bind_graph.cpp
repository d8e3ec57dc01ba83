#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "graph_handles.h"
#include "numpy_views.h"
#include "tinyarena/graph/op_metrics.h"

namespace py = pybind11;

namespace tinyarena::bindings {
namespace {

// numpy dtype of a TFLite type, or "" for types numpy cannot view directly.
const char* numpy_dtype(graph::DType dtype) {
  using graph::DType;
  switch (dtype) {
    case DType::Float32: return "float32";
    case DType::Float16: return "float16";
    case DType::Float64: return "float64";
    case DType::Int8: return "int8";
    case DType::UInt8: return "uint8";
    case DType::Int16: return "int16";
    case DType::UInt16: return "uint16";
    case DType::Int32: return "int32";
    case DType::UInt32: return "uint32";
    case DType::Int64: return "int64";
    case DType::UInt64: return "uint64";
    case DType::Bool: return "bool";
    default: return "";
  }
}

// The constant data of a tensor as a read-only view into the model bytes,
// shaped like the tensor; raw uint8 bytes for packed or opaque types.
py::object constant_data(const TensorHandle& h) {
  const graph::Tensor& t = h.get();
  if (!t.is_constant()) return py::none();
  auto owner = py::capsule(new GraphPtr(h.graph), [](void* p) { delete static_cast<GraphPtr*>(p); });
  const uint8_t* data = h.graph->constant_data(t);
  const std::string dtype = numpy_dtype(t.dtype);
  py::array array;
  if (dtype.empty() || !t.byte_size) {
    array = py::array(py::dtype("uint8"), {static_cast<py::ssize_t>(t.data->size)}, {}, data, owner);
  } else {
    std::vector<py::ssize_t> shape(t.shape.begin(), t.shape.end());
    array = py::array(py::dtype(dtype), shape, {}, data, owner);
  }
  make_readonly(array);
  return array;
}

py::tuple tuple_of(const std::vector<int32_t>& values) { return py::cast(values); }

void bind_tensor(py::module_& m) {
  py::class_<TensorHandle>(m, "Tensor", "A tensor of the graph (read-only).")
      .def_property_readonly("index", [](const TensorHandle& h) { return h.index; })
      .def_property_readonly("name", [](const TensorHandle& h) { return h.get().name; })
      .def_property_readonly("shape", [](const TensorHandle& h) { return tuple_of(h.get().shape); })
      .def_property_readonly("dtype", [](const TensorHandle& h) { return graph::dtype_name(h.get().dtype); })
      .def_property_readonly("element_count", [](const TensorHandle& h) { return h.get().element_count; })
      .def_property_readonly("byte_size", [](const TensorHandle& h) { return h.get().byte_size; },
                             "Bytes the tensor takes (None for types without a fixed size).")
      .def_property_readonly("is_constant", [](const TensorHandle& h) { return h.get().is_constant(); },
                             "True for constants (flash); False for activations (SRAM).")
      .def_property_readonly("is_variable", [](const TensorHandle& h) { return h.get().is_variable; })
      .def_property_readonly("scale", [](const TensorHandle& h) { return readonly_array(h.get().quantization.scale); })
      .def_property_readonly("zero_point",
                             [](const TensorHandle& h) { return readonly_array(h.get().quantization.zero_point); })
      .def_property_readonly("quantized_axis", [](const TensorHandle& h) { return h.get().quantization.axis; })
      .def_property_readonly("data", &constant_data, "Constant data as a read-only numpy array, or None.")
      .def_property_readonly("producer", [](const TensorHandle& h) { return h.get().producer; },
                             "Index of the op that writes this tensor, -1 if none.")
      .def_property_readonly("consumers", [](const TensorHandle& h) { return tuple_of(h.get().consumers); })
      .def_property_readonly("placement",
                             [](const TensorHandle& h) -> py::object {
                               const auto& p = h.get().placement;
                               if (!p) return py::none();
                               return py::make_tuple(p->base, p->offset, p->pix_stride);
                             },
                             "(base tensor, byte offset, pixel stride) when a transform placed it inside "
                             "another tensor, else None.")
      .def("__repr__", [](const TensorHandle& h) {
        const auto& t = h.get();
        std::string shape;
        for (int32_t d : t.shape) shape += (shape.empty() ? "" : ",") + std::to_string(d);
        return "<Tensor " + std::to_string(t.index) + " '" + t.name + "' " + graph::dtype_name(t.dtype) + "[" +
               shape + "]" + (t.is_constant() ? " const" : "") + ">";
      });
}

void bind_options(py::module_& m) {
  using graph::OpOptions;
  py::class_<OpOptions>(m, "OpOptions", "Builtin options of an op, with TFLite defaults where absent.")
      .def_property_readonly("padding", [](const OpOptions& o) { return graph::padding_name(o.padding); })
      .def_property_readonly("activation", [](const OpOptions& o) { return graph::activation_name(o.activation); })
      .def_readonly("pad_top", &OpOptions::pad_top)
      .def_readonly("pad_left", &OpOptions::pad_left)
      .def_readonly("pad_bottom", &OpOptions::pad_bottom)
      .def_readonly("pad_right", &OpOptions::pad_right)
      .def_readonly("stride_w", &OpOptions::stride_w)
      .def_readonly("stride_h", &OpOptions::stride_h)
      .def_readonly("dilation_w", &OpOptions::dilation_w)
      .def_readonly("dilation_h", &OpOptions::dilation_h)
      .def_readonly("filter_w", &OpOptions::filter_w)
      .def_readonly("filter_h", &OpOptions::filter_h)
      .def_readonly("depth_multiplier", &OpOptions::depth_multiplier)
      .def_readonly("axis", &OpOptions::axis)
      .def_readonly("batch_dims", &OpOptions::batch_dims)
      .def_readonly("alpha", &OpOptions::alpha)
      .def_readonly("num_splits", &OpOptions::num_splits)
      .def_readonly("keep_dims", &OpOptions::keep_dims)
      .def_readonly("keep_num_dims", &OpOptions::keep_num_dims)
      .def_readonly("beta", &OpOptions::beta)
      .def_readonly("align_corners", &OpOptions::align_corners)
      .def_readonly("half_pixel_centers", &OpOptions::half_pixel_centers)
      .def_readonly("begin_mask", &OpOptions::begin_mask)
      .def_readonly("end_mask", &OpOptions::end_mask)
      .def_readonly("ellipsis_mask", &OpOptions::ellipsis_mask)
      .def_readonly("new_axis_mask", &OpOptions::new_axis_mask)
      .def_readonly("shrink_axis_mask", &OpOptions::shrink_axis_mask)
      .def_readonly("new_shape", &OpOptions::new_shape)
      .def_readonly("squeeze_dims", &OpOptions::squeeze_dims)
      .def_readonly("cell_clip", &OpOptions::cell_clip)
      .def_readonly("proj_clip", &OpOptions::proj_clip)
      .def_readonly("time_major", &OpOptions::time_major)
      .def_readonly("asymmetric_quantize_inputs", &OpOptions::asymmetric_quantize_inputs)
      .def_readonly("diagonal_recurrent_tensors", &OpOptions::diagonal_recurrent_tensors);
}

void bind_op(py::module_& m) {
  py::class_<graph::OpMetrics>(m, "OpMetrics", "MACs and flash bytes of one op.")
      .def_readonly("macs", &graph::OpMetrics::macs)
      .def_readonly("weight_bytes", &graph::OpMetrics::weight_bytes)
      .def_readonly("bias_bytes", &graph::OpMetrics::bias_bytes)
      .def_readonly("scale_bytes", &graph::OpMetrics::scale_bytes)
      .def_property_readonly("flash_bytes", &graph::OpMetrics::flash_bytes);
  py::class_<OpHandle>(m, "Op", "An operator of the graph (read-only).")
      .def_property_readonly("index", [](const OpHandle& h) { return h.index; })
      .def_property_readonly("type", [](const OpHandle& h) { return h.get().type; })
      .def_property_readonly("opcode", [](const OpHandle& h) { return h.get().opcode; })
      .def_property_readonly("version", [](const OpHandle& h) { return h.get().version; })
      .def_property_readonly("options", [](const OpHandle& h) { return h.get().options; })
      .def_property_readonly("inputs", [](const OpHandle& h) { return tuple_of(h.get().inputs); },
                             "Input tensor indices (-1 for an omitted optional input).")
      .def_property_readonly("outputs", [](const OpHandle& h) { return tuple_of(h.get().outputs); })
      .def_property_readonly("intermediates", [](const OpHandle& h) { return tuple_of(h.get().intermediates); },
                             "Tensors carrying only quantization for the kernel (an LSTM's gate and hidden scales).")
      .def_property_readonly("elided", [](const OpHandle& h) { return h.get().elided; },
                             "True when a transform made it zero-copy: it moves no data.")
      .def_property_readonly("macs", [](const OpHandle& h) { return graph::op_macs(*h.graph, h.get()); })
      .def("__repr__", [](const OpHandle& h) {
        return "<Op " + std::to_string(h.index) + " " + h.get().type + ">";
      });
}

void bind_graph_class(py::module_& m) {
  py::class_<graph::Graph, GraphPtr>(m, "Graph", "A model's graph IR: ops in execution order, tensors, I/O.")
      .def_property_readonly("tensors",
                             [](const GraphPtr& g) {
                               py::list tensors;
                               for (size_t i = 0; i < g->tensors.size(); ++i)
                                 tensors.append(TensorHandle{g, static_cast<int32_t>(i)});
                               return py::tuple(tensors);
                             })
      .def_property_readonly("ops",
                             [](const GraphPtr& g) {
                               py::list ops;
                               for (size_t i = 0; i < g->ops.size(); ++i) ops.append(OpHandle{g, static_cast<int32_t>(i)});
                               return py::tuple(ops);
                             })
      .def_property_readonly("inputs", [](const GraphPtr& g) { return tuple_of(g->inputs); })
      .def_property_readonly("outputs", [](const GraphPtr& g) { return tuple_of(g->outputs); })
      .def_property_readonly("description", [](const GraphPtr& g) { return g->description; })
      .def_property_readonly("model_bytes",
                             [](const GraphPtr& g) {
                               return py::bytes(reinterpret_cast<const char*>(g->model_bytes->data()),
                                                g->model_bytes->size());
                             },
                             "The .tflite bytes the graph was read from.")
      .def_property_readonly("subgraph_count", [](const GraphPtr& g) { return g->subgraph_count; })
      .def("op_metrics", [](const GraphPtr& g) { return graph::op_metrics(*g); },
           "MACs and flash bytes per op (shared constants counted at their first reader).")
      .def("__repr__", [](const GraphPtr& g) {
        return "<Graph " + std::to_string(g->ops.size()) + " ops, " + std::to_string(g->tensors.size()) + " tensors>";
      });
}

}  // namespace

void bind_graph(py::module_& m) {
  bind_tensor(m);
  bind_options(m);
  bind_op(m);
  bind_graph_class(m);
}

}  // namespace tinyarena::bindings
