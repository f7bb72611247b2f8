#!/usr/bin/env python3
"""Print the import graph of the crate's modules and any cycle in it.

Every source file under src/ is one module (src/table/build/mod.rs is
`table::build`, src/table/build/retro.rs is `table::build::retro`); the binary
(src/main.rs and src/cli/) is shown under `bin`, and its `millbase::` paths point
into the library. An edge A -> B means a file of A names an item of B:

- in a `use` declaration (`use crate::a::b::C;`, grouped
  `use crate::{a::B, c::{D, E}};`, `use super::X;`, `use self::m::Y;`, or a
  child module named bare, `use m::Z;`);
- or in a path in the code (`crate::a::b::f()`, `super::f()`, `m::f()` for a
  child module `m`).

Comments, strings and character literals are skipped; a `#[cfg(test)] mod tests`
inside a file belongs to that file. A path leads to the longest module it names,
so `crate::table::probe::Tablebase` is an edge to `table::probe`; a path through a
name a module imports (`crate::Tablebase`, re-exported at the root, or
`super::f` where the parent has `use m::f;`) leads to the module that defines it,
and the importing module has its own edge there.

The rule is that imports run downward: the graph has no cycle. The script exits
with status 1 and prints each cycle when it has one, 0 otherwise.

Usage: tools/import-graph.py [--quiet] [SRC_DIR]
  --quiet  print only the cycles (and a one-line summary), not every edge
"""

import os
import re
import sys


def module_of(rel):
    """The module path of a file, relative to src/: a tuple of names."""
    parts = rel[:-3].split(os.sep)  # drop ".rs"
    if parts == ["lib"]:
        return ("crate",)
    if parts == ["main"]:
        return ("bin",)
    if parts[-1] == "mod":
        parts = parts[:-1]
    if parts and parts[0] == "cli":
        return ("bin",) + tuple(parts)
    return ("crate",) + tuple(parts)


def strip(text):
    """The source with comments, strings and char literals blanked out."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            depth, i = 1, i + 2
            while i < n and depth:
                if text.startswith("/*", i):
                    depth, i = depth + 1, i + 2
                elif text.startswith("*/", i):
                    depth, i = depth - 1, i + 2
                else:
                    i += 1
            out.append(" ")
            continue
        m = re.compile(r'b?r(#*)"').match(text, i)
        if m and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            end = '"' + m.group(1)
            j = text.find(end, m.end())
            i = n if j < 0 else j + len(end)
            out.append('""')
            continue
        if c == '"' or (c == "b" and text.startswith('b"', i)):
            i += 2 if c == "b" else 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            i += 1
            out.append('""')
            continue
        if c == "'":
            # A char literal ('a', '\n', '\u{..}') or a lifetime ('a).
            m = re.compile(r"'(\\u\{[0-9a-fA-F]+\}|\\.|[^\\'])'").match(text, i)
            if m:
                out.append("' '")
                i = m.end()
                continue
        out.append(c)
        i += 1
    return "".join(out)


TOKEN = re.compile(r"[A-Za-z_][A-Za-z0-9_]*|::|\{|\}|;|,|\*|\S")


def use_paths(tokens, start):
    """The paths of the use tree beginning at tokens[start], and the index after it.

    `a::{b, c::{d, e as f}}` gives (a::b, b), (a::c::d, d), (a::c::e, f): each
    path a list of names with the name it is known by.
    """
    paths = []

    def tree(i, prefix):
        path = list(prefix)
        while i < len(tokens):
            t = tokens[i]
            if t == "{":
                i += 1
                while i < len(tokens) and tokens[i] != "}":
                    i = tree(i, path)
                    if i < len(tokens) and tokens[i] == ",":
                        i += 1
                return i + 1
            if t == "::":
                i += 1
                continue
            if t == "*":
                paths.append((path, "*"))
                return i + 1
            if t in (",", ";", "}"):
                paths.append((path, path[-1] if path else ""))
                return i
            if t == "as":
                paths.append((path, tokens[i + 1] if i + 1 < len(tokens) else ""))
                return i + 2
            path.append(t)
            i += 1
        paths.append((path, path[-1] if path else ""))
        return i

    i = tree(start, [])
    return paths, i


IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


class Crate:
    """The modules, and the names each imports (`use a::B;`, `pub use a::B;`)."""

    def __init__(self, files):
        self.modules = set(files)
        self.reexports = {}  # (module, name) -> absolute path

    def children(self, mod):
        return {m[len(mod)] for m in self.modules if len(m) == len(mod) + 1 and m[: len(mod)] == mod}

    def absolute(self, path, here, file_module):
        """The absolute path (a tuple from the crate root) a path written in
        scope `here` names, or None for a path into another crate."""
        if not path:
            return None
        head = path[0]
        if head == "crate":
            root = ("bin",) if file_module[0] == "bin" else ("crate",)
            return root + tuple(path[1:])
        if head == "millbase" and file_module[0] == "bin":
            return ("crate",) + tuple(path[1:])
        if head in ("super", "self"):
            base, rest = list(here), list(path)
            while rest and rest[0] in ("super", "self"):
                if rest.pop(0) == "super":
                    base.pop()
            return tuple(base) + tuple(rest)
        if head in self.children(here):
            return tuple(here) + tuple(path)
        if (tuple(here), head) in self.reexports:
            # A name this module imported: `use crate::rules::fen;` then `fen::parse`.
            return self.reexports[(tuple(here), head)] + tuple(path[1:])
        return None

    def module(self, full):
        """The module an absolute path leads to, following imports: the module
        that defines the item, not one that imports or re-exports it."""
        for _ in range(20):
            if full is None:
                return None
            best = next((full[:k] for k in range(len(full), 0, -1) if full[:k] in self.modules), None)
            if best is None:
                return None
            if len(full) > len(best) and (best, full[len(best)]) in self.reexports:
                full = self.reexports[(best, full[len(best)])] + full[len(best) + 1 :]
                continue
            return best
        return None


def references(text, module, crate):
    """The edges of a file: {(from, to): first line}, `from` being the file's
    module or a module written inline in it (`mod tests { ... }`), which is a
    module of its own. Records the file's re-exports in `crate`."""
    src = strip(text)
    tokens, lines = [], []
    for m in TOKEN.finditer(src):
        tokens.append(m.group(0))
        lines.append(src.count("\n", 0, m.start()) + 1)
    refs = {}

    # Inline modules (`mod tests { ... }`) nest the scope `super::` counts from.
    scope = [module]
    opened = []  # brace depth at which each inline module opened
    depth = 0

    def add(full, line):
        here = scope[-1]
        target = crate.module(full)
        if target and target != here and (here, target) not in refs:
            refs[(here, target)] = line

    i = 0
    while i < len(tokens):
        t = tokens[i]
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if opened and opened[-1] == depth:
                opened.pop()
                scope.pop()
        elif t == "mod" and i + 2 < len(tokens) and tokens[i + 2] == "{":
            scope.append(tuple(scope[-1]) + (tokens[i + 1],))
            crate.modules.add(scope[-1])
            opened.append(depth)
            depth += 1
            i += 3
            continue
        elif t == "use" and (i == 0 or tokens[i - 1] in (";", "{", "}", "]", "pub", ")")):
            paths, i = use_paths(tokens, i + 1)
            for path, alias in paths:
                full = crate.absolute(path, scope[-1], module)
                # Any `use` names the item in this module (a private one for the
                # module's children): a path through it leads to the item.
                if alias == "self" and len(path) >= 2:
                    alias, full = path[-2], full[:-1] if full else full
                if full and alias != "*":
                    crate.reexports[(scope[-1], alias)] = full
                add(full, lines[i - 1])
            continue
        elif IDENT.fullmatch(t) and i + 1 < len(tokens) and tokens[i + 1] == "::" and (i == 0 or tokens[i - 1] != "::"):
            # A path in the code: collect a::b::c.
            j, path = i, []
            while j < len(tokens) and IDENT.fullmatch(tokens[j]):
                path.append(tokens[j])
                if j + 1 < len(tokens) and tokens[j + 1] == "::":
                    j += 2
                else:
                    j += 1
                    break
            add(crate.absolute(path, scope[-1], module), lines[i])
            i = j
            continue
        i += 1
    return refs


def cycles(graph):
    """The strongly connected components with more than one module (Tarjan)."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(graph):
        if v not in index:
            visit(v)
    return out


def one_cycle(graph, comp):
    """A shortest cycle through the first module of a component, as a list."""
    members = set(comp)
    start = comp[0]
    prev = {start: None}
    frontier = [start]
    while frontier:
        nxt = []
        for v in frontier:
            for w in sorted(graph.get(v, ())):
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while prev[path[-1]] is not None:
                        path.append(prev[path[-1]])
                    return list(reversed(path)) + [start]
                if w not in prev:
                    prev[w] = v
                    nxt.append(w)
        frontier = nxt
    return comp


def name(mod):
    return "::".join(mod[1:]) or mod[0] if mod[0] == "crate" else "::".join(mod)


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    quiet = "--quiet" in sys.argv[1:]
    src = args[0] if args else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "src")
    files = {}
    for root, _, names in os.walk(src):
        for f in names:
            if f.endswith(".rs"):
                path = os.path.join(root, f)
                files[module_of(os.path.relpath(path, src))] = path
    crate = Crate(files)
    texts = {}
    for mod, path in files.items():
        with open(path, encoding="utf-8") as fh:
            texts[mod] = fh.read()
    # The first pass learns the re-exports, the second follows them.
    for mod in sorted(files):
        references(texts[mod], mod, crate)
    graph, where = {m: set() for m in crate.modules}, {}
    for mod, path in sorted(files.items()):
        for (a, b), line in references(texts[mod], mod, crate).items():
            graph[a].add(b)
            where[(a, b)] = f"{os.path.relpath(path, os.path.join(src, '..'))}:{line}"
    if not quiet:
        for mod in sorted(graph):
            for t in sorted(graph[mod]):
                print(f"{name(mod)} -> {name(t)}")
    comps = cycles(graph)
    edges = sum(len(v) for v in graph.values())
    if not comps:
        print(f"{len(graph)} modules, {edges} edges, no cycle")
        return 0
    for comp in comps:
        cyc = one_cycle(graph, comp)
        print(f"cycle among {len(comp)} modules: " + ", ".join(name(m) for m in comp))
        for a, b in zip(cyc, cyc[1:]):
            print(f"  {name(a)} -> {name(b)}  ({where[(a, b)]})")
    print(f"{len(graph)} modules, {edges} edges, {len(comps)} cycle(s)")
    return 1


if __name__ == "__main__":
    sys.exit(main())
