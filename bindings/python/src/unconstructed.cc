#include "bindings/python/src/unconstructed.h"

#include <array>
#include <cstddef>
#include <stdexcept>
#include <string>
#include <utility>

namespace lockstep {
namespace python {
namespace {

namespace py = pybind11;

// The hook receives only a size, so each class gets its own instance of Hook<I>, which knows the
// class as guarded[I]. Install() fails the import if the bindings outgrow the table.
constexpr std::size_t kMaxClasses = 256;
std::array<PyTypeObject*, kMaxClasses> guarded{};

[[noreturn]] void Refuse(std::size_t i) {
  const py::handle cls(reinterpret_cast<PyObject*>(guarded[i]));
  const std::string name = py::str(cls.attr("__module__")).cast<std::string>() + "." +
                           py::str(cls.attr("__qualname__")).cast<std::string>();
  // The class hooked is the one the method takes, which may be a base of the object's own class.
  throw py::type_error(name + ": this object's __init__ never ran (it was made with __new__ alone), so it holds "
                       "no engine object; create it by calling its class");
}

template <std::size_t I>
void* Hook(std::size_t) {
  Refuse(I);
}

template <std::size_t... I>
constexpr std::array<void* (*)(std::size_t), sizeof...(I)> Hooks(std::index_sequence<I...>) {
  return {{&Hook<I>...}};
}

}  // namespace

UnconstructedGuard::UnconstructedGuard() {
  for (const auto& entry : py::detail::get_internals().registered_types_py) before_.insert(entry.first);
}

void UnconstructedGuard::Install() const {
  static constexpr auto hooks = Hooks(std::make_index_sequence<kMaxClasses>());
  std::size_t used = 0;
  for (const auto& [type, infos] : py::detail::get_internals().registered_types_py) {
    if (before_.count(type)) continue;
    for (py::detail::type_info* info : infos) {
      if (info->type != type) continue;  // a Python subclass's entry: its C++ class is hooked itself
      if (used == kMaxClasses) throw std::logic_error("lockstep._C binds more classes than UnconstructedGuard can hook");
      guarded[used] = type;
      info->operator_new = hooks[used++];
    }
  }
}

}  // namespace python
}  // namespace lockstep
