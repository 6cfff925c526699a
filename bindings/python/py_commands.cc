// The CLI's subcommands from Python, run in this process by the same code as `rigel`
// (cli/command_line.h), so rigel.convert, bake and retarget take every option the CLI has
// (rigel/__init__.py turns keyword arguments into its options). Their stdout and stderr are
// captured and returned; bake and retarget still run clips in forked, confined worker processes.
#include <fcntl.h>
#include <pybind11/stl.h>
#include <pybind11/stl/filesystem.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "bindings/python/py_module.h"
#include "cli/command_line.h"
#include "cli/scene_info.h"
#include "importers/load_scene.h"

namespace rigel::python {

namespace {

// Redirects file descriptor `fd` into an anonymous temporary file until Release(), which returns
// what was written and restores the descriptor.
class Capture {
 public:
  explicit Capture(int fd) : fd_(fd) {
    std::fflush(nullptr);
    FILE* tmp = std::tmpfile();
    if (tmp == nullptr) throw std::runtime_error("cannot create a temporary file for output");
    file_ = tmp;
    saved_ = dup(fd_);
    dup2(fileno(file_), fd_);
  }
  Capture(const Capture&) = delete;
  Capture& operator=(const Capture&) = delete;
  ~Capture() { Release(); }

  std::string Release() {
    if (file_ == nullptr) return text_;
    std::fflush(nullptr);
    dup2(saved_, fd_);
    close(saved_);
    std::rewind(file_);
    char buffer[65536];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, file_)) > 0) text_.append(buffer, n);
    std::fclose(file_);
    file_ = nullptr;
    return text_;
  }

 private:
  int fd_;
  int saved_ = -1;
  FILE* file_ = nullptr;
  std::string text_;
};

// Runs `rigel ARGS...`; returns (exit code, stdout, stderr).
py::tuple RunCommand(const std::vector<std::string>& args) {
  std::vector<std::string> argv_text = {"rigel"};
  argv_text.insert(argv_text.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : argv_text) argv.push_back(a.data());
  argv.push_back(nullptr);
  int rc;
  std::string out, err;
  {
    py::gil_scoped_release release;
    Capture capture_out(1), capture_err(2);
    rc = cli::RunCommandLine(static_cast<int>(argv_text.size()), argv.data());
    err = capture_err.Release();
    out = capture_out.Release();
  }
  return py::make_tuple(rc, py::bytes(out).attr("decode")("utf-8", "replace"),
                        py::bytes(err).attr("decode")("utf-8", "replace"));
}

}  // namespace

void DefineCommands(py::module_& m) {
  m.def("run_command", &RunCommand, py::arg("args"),
        "Runs `rigel ARGS...` in this process (the same code as the rigel executable) and "
        "returns (exit_code, stdout, stderr). rigel.convert, bake and retarget call it.");
  m.def(
      "info_json",
      [](const std::filesystem::path& path, const std::string& unit,
         const std::string& bvh_translation, const std::string& unit_in, const std::string& up,
         const std::string& forward) {
        const LoadOptions options =
            LoadOptionsOf(unit, bvh_translation, unit_in, up, forward, true);
        std::string text;
        {
          py::gil_scoped_release release;
          text = cli::DescribeScene(LoadScene(path.string(), options))
                     .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
        }
        return text;
      },
      py::arg("path"), py::kw_only(), py::arg("unit") = "file", py::arg("bvh_translation") = "auto",
      py::arg("unit_in") = "", py::arg("up") = "", py::arg("forward") = "",
      "`rigel info --json PATH` as a JSON text (rigel.info parses it into a dict).");
}

}  // namespace rigel::python
