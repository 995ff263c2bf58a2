# lit configuration of the attn-ext example: its own tool, the installed
# attn-mlir tools (attn-run) and LLVM's FileCheck.
import os

import lit.formats

config.name = "attn-ext"
config.test_format = lit.formats.ShTest(execute_external=False)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(os.path.dirname(config.attn_ext_tools_dir), "test")
config.environment["PATH"] = os.pathsep.join(
    [config.attn_ext_tools_dir, config.attn_tools_dir, config.llvm_tools_dir,
     config.environment.get("PATH", "")])
