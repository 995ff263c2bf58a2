# ===- test_layers.py - the package's modules in one straight line --------=== #
#
# Part of attn-mlir, an MLIR-based attention compiler.
#
# A call goes API (functional, flex, nn, integrations) -> custom ops
# (_autograd) -> call plan (_plan, _trace, _heads, _linear) -> compile
# cache (_compile) -> native code, and no module imports one above it:
# every import inside the package, at the top of a module or inside a
# function, is checked to form no cycle.
#
# ===----------------------------------------------------------------------=== #

import ast
import pathlib

import attn_mlir

PACKAGE = pathlib.Path(attn_mlir.__file__).parent


def _module_name(path):
    parts = path.relative_to(PACKAGE).with_suffix("").parts
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(("attn_mlir",) + parts)


def _imports(path):
    """The attn_mlir modules `path` imports, anywhere in it."""
    name = _module_name(path)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.level:
            base = package.split(".")
            base = base[:len(base) - node.level + 1]
            module = ".".join(base + ([node.module] if node.module else []))
            if node.module:
                found.add(module)
            # `from . import x` imports the module x when it is one.
            for alias in node.names:
                if (PACKAGE.parent / (module + "." + alias.name).replace(".", "/")).with_suffix(
                        ".py").exists():
                    found.add(module + "." + alias.name)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names if a.name.startswith("attn_mlir."))
    found.discard(name)
    return found


def _graph():
    graph = {_module_name(p): _imports(p) for p in PACKAGE.rglob("*.py")}
    # The package itself re-exports everything; its modules import it
    # only through their own names.
    graph.pop("attn_mlir")
    return {m: {d for d in deps if d in graph} for m, deps in graph.items()}


def _cycle(graph):
    """A list of modules forming an import cycle, or None."""
    state = {}

    def visit(module, path):
        state[module] = "open"
        for dep in sorted(graph[module]):
            if state.get(dep) == "open":
                return path[path.index(dep):] + [dep]
            if dep not in state:
                found = visit(dep, path + [dep])
                if found:
                    return found
        state[module] = "done"
        return None

    for module in sorted(graph):
        if module not in state:
            found = visit(module, [module])
            if found:
                return found
    return None


def test_no_module_imports_one_above_it():
    graph = _graph()
    assert "attn_mlir._plan" in graph and graph["attn_mlir.functional"], graph
    assert _cycle(graph) is None, " -> ".join(_cycle(graph))


def test_the_cycle_check_finds_cycles():
    assert _cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert _cycle({"a": {"b"}, "b": set()}) is None


def test_the_layers_run_in_order():
    graph = _graph()
    # The call plan and the compile cache know nothing of the APIs above.
    for low in ("attn_mlir._plan", "attn_mlir._trace", "attn_mlir._compile",
                "attn_mlir._autograd"):
        for api in ("attn_mlir.functional", "attn_mlir.flex", "attn_mlir.nn"):
            assert api not in graph[low], f"{low} imports {api}"
