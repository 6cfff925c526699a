// NumPy views over rigel's own storage (see py_module.h).
#include <cstdint>

#include "bindings/python/py_module.h"

namespace rigel::python {

template <typename T>
py::array ViewOf(T* data, std::vector<py::ssize_t> shape, py::handle owner, bool writeable) {
  std::vector<py::ssize_t> strides(shape.size());
  py::ssize_t stride = sizeof(T);
  for (std::size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= shape[i];
  }
  // An empty array still needs a valid pointer for NumPy.
  static T empty{};
  py::array out(py::dtype::of<T>(), shape, strides, data != nullptr ? data : &empty, owner);
  if (!writeable) out.attr("flags").attr("writeable") = false;
  return out;
}

template py::array ViewOf(double*, std::vector<py::ssize_t>, py::handle, bool);
template py::array ViewOf(float*, std::vector<py::ssize_t>, py::handle, bool);
template py::array ViewOf(int*, std::vector<py::ssize_t>, py::handle, bool);
template py::array ViewOf(std::uint16_t*, std::vector<py::ssize_t>, py::handle, bool);
template py::array ViewOf(std::uint32_t*, std::vector<py::ssize_t>, py::handle, bool);

}  // namespace rigel::python
