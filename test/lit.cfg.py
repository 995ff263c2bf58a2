# -*- Python -*-
# lit configuration for the attn-mlir test suite.

import os
import shutil
import subprocess

import lit.formats
from lit.llvm import llvm_config
from lit.llvm.subst import ToolSubst

config.name = "ATTN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir", ".test"]
config.excludes = ["CMakeLists.txt", "README.md", "lit.cfg.py", "lit.site.cfg.py", "lib", "Inputs"]

config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.attn_obj_root, "test")

config.substitutions.append(("%PATH%", config.environment["PATH"]))
config.substitutions.append(("%attn_src_root", config.attn_src_root))
config.substitutions.append(("%attn_obj_root", config.attn_obj_root))
# The attn dialect, passes and pipelines as an mlir-opt plugin.
config.substitutions.append(
    ("%attn_plugin", os.path.join(config.attn_obj_root, "lib", "AttnMLIRPlugin.so")))

# A project built on the installed tree (test/Install): CMake and the
# compilers, linker and MLIR of this build.
config.substitutions.append(("%cmake", '"%s"' % config.cmake_command))
downstream = ["-G Ninja", "-DCMAKE_BUILD_TYPE=Release",
              '-DCMAKE_C_COMPILER="%s"' % config.host_cc,
              '-DCMAKE_CXX_COMPILER="%s"' % config.host_cxx,
              "-DLLVM_USE_LINKER=lld", '-DMLIR_DIR="%s"' % config.mlir_dir]
if config.cxx_compiler_launcher:
    downstream.append('-DCMAKE_CXX_COMPILER_LAUNCHER="%s"' % config.cxx_compiler_launcher)
config.substitutions.append(("%downstream_cmake_flags", " ".join(downstream)))
config.substitutions.append(("%mlir_include_dir", config.mlir_include_dir))

# Captured FileCheck variables do not leak across CHECK-LABELs.
config.environment["FILECHECK_OPTS"] = "--enable-var-scope"
# Compiled code's temporaries (attn-run, the Python package) are filled with
# NaN when handed out: code that reads one before writing it fails its test.
config.environment["ATTN_MLIR_ALLOCATOR_POISON"] = "1"

llvm_config.use_default_substitutions()
llvm_config.with_environment("PATH", config.llvm_tools_dir, append_path=True)

tools = [
    "attn-opt",
    "attn-run",
    "attn-translate",
    "attnc",
    "attn-mma-layout-check",
    "attn-parse-fuzzer",
    "attn-mutate-fuzzer",
    "attn-gen-fuzzer",
    "attn-mem-bandwidth",
    # Upstream's mlir-opt, which loads the attn plugin (test/Plugin).
    "mlir-opt",
    # LLVM 22's, which test/Tools/clang-format.test checks the sources with.
    "clang-format",
    # The C compiler the C ABI tests build their programs with.
    ToolSubst("%cc", config.host_cc, unresolved="fatal"),
]
llvm_config.add_tool_substitutions(tools, [config.attn_tools_dir, config.llvm_tools_dir])

# lit's default %python is the interpreter lit itself runs under; the tests
# need the one scripts/deps.sh installed NumPy into, which CMake recorded.
config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
config.substitutions.append(("%python", '"%s"' % config.python_executable))

# A sanitized build (-DATTN_SANITIZE=ON, docs/Testing.md): any report fails
# the test. Leaks are not checked (LLVM's and Python's own allocations at
# exit). The Python module is instrumented but Python is not: its
# interpreter gets the sanitizer runtime preloaded.
if config.attn_sanitize.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("sanitized")
    config.environment["ASAN_OPTIONS"] = "detect_leaks=0:abort_on_error=0"
    config.environment["UBSAN_OPTIONS"] = "halt_on_error=1:print_stacktrace=1"
    runtime = subprocess.check_output(
        [config.host_cc, "-print-file-name=libclang_rt.asan-x86_64.so"], text=True).strip()
    config.substitutions = [s for s in config.substitutions if s[0] != "%python"]
    config.substitutions.append(
        ("%python", 'env LD_PRELOAD="%s" "%s"' % (runtime, config.python_executable)))
    # The fuzz targets link libFuzzer's C++ library before the runtime,
    # which ASan refuses unless the runtime is preloaded.
    config.environment["LD_PRELOAD"] = runtime

# What scripts/deps.sh installs is required, not optional: a test that
# skips for want of it would report untested code as fine. Only hardware
# (the host's vector ISA, a GPU) and the CUDA toolkit decide what runs.
missing_deps = []

# Integration tests compute float64 references with NumPy.
if subprocess.call([config.python_executable, "-c", "import numpy"],
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL) == 0:
    config.available_features.add("numpy")
else:
    missing_deps.append("NumPy for %s" % config.python_executable)

# The host's vector ISA, for tests that run code compiled for a named CPU.
try:
    with open("/proc/cpuinfo") as cpuinfo:
        flags = next((line.split(":", 1)[1].split() for line in cpuinfo
                      if line.startswith("flags")), [])
except OSError:
    flags = []
if "avx2" in flags and "fma" in flags:
    config.available_features.add("host-avx2")
if "avx512f" in flags:
    config.available_features.add("host-avx512")
if "avx512_bf16" in flags:
    config.available_features.add("host-avx512bf16")

# AArch64 code runs under qemu-user on Debian's cross C library
# (scripts/deps.sh installs both where apt can).
qemu = shutil.which("qemu-aarch64")
aarch64_sysroot = "/usr/aarch64-linux-gnu"
if qemu and os.path.exists(os.path.join(aarch64_sysroot, "lib", "libc.so.6")) \
        and os.path.exists(os.path.join(aarch64_sysroot, "lib", "crt1.o")):
    config.available_features.add("aarch64-qemu")
    config.substitutions.append(("%qemu_aarch64", qemu))
    config.substitutions.append(("%aarch64_sysroot", aarch64_sysroot))
else:
    missing_deps.append("qemu-aarch64 and the AArch64 C library in %s" % aarch64_sysroot)

# CUDA integration tests execute only where a GPU is present.
if shutil.which("nvidia-smi") and os.system("nvidia-smi -L > /dev/null 2>&1") == 0:
    config.available_features.add("cuda-device")

# PTX tests hand the generated PTX to ptxas: the CUDA toolkit's, or that of
# NVIDIA's compiler wheel where there is no toolkit (the build records
# either). The runtime library exists when the build found the toolkit.
ptxas = shutil.which("ptxas") or shutil.which("ptxas", path=os.path.join(config.cuda_toolkit_root, "bin"))
if ptxas:
    config.available_features.add("ptxas")
    config.substitutions.append(("%ptxas", ptxas))
else:
    missing_deps.append("ptxas (a CUDA toolkit or the nvidia-cuda-nvcc wheel, "
                        "found when CMake configured the build)")
if config.cuda_runtime_library:
    config.available_features.add("cuda-runtime")
    # The toolkit's driver stub loads but fails every call: what the runtime
    # reports then is testable without a driver.
    stub = os.path.join(config.cuda_toolkit_root, "lib64", "stubs", "libcuda.so")
    if os.path.exists(stub):
        config.available_features.add("cuda-stub")
        config.substitutions.append(("%cuda_stub", stub))

# The fuzz targets are libFuzzer binaries where the compiler links libFuzzer
# (compiler-rt's libclang-rt-22-dev); elsewhere they only replay inputs.
if config.attn_have_libfuzzer.upper() in ("ON", "1", "TRUE", "YES"):
    config.available_features.add("libfuzzer")
else:
    missing_deps.append("libFuzzer (libclang-rt-22-dev, found when CMake "
                        "configured the build)")

if missing_deps:
    lit_config.fatal("missing test dependencies: %s; scripts/deps.sh installs "
                     "them (then reconfigure the build for ptxas)" % "; ".join(missing_deps))
