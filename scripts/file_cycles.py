#!/usr/bin/env python3
"""Lists the import cycles between the files of a Rust crate.

An edge goes from a file to every module file it names through a
`crate::`, `super::` or `self::` path (code before `#[cfg(test)]` only,
comments dropped); a path names the longest module prefix that is a file.
Prints each cycle (a strongly connected set of files) with its edges and
exits 1 if there is any.

    python3 scripts/file_cycles.py crates/handlekit/src
"""
import os
import re
import sys


def modules(root):
    files = {}
    for directory, _, names in os.walk(root):
        for name in names:
            if name.endswith('.rs'):
                path = os.path.join(directory, name)
                parts = os.path.relpath(path, root)[:-3].split(os.sep)
                if parts[-1] in ('mod', 'lib', 'main'):
                    parts = parts[:-1]
                files[tuple(parts)] = path
    return files


def edges_of(files):
    def resolve(path):
        for i in range(len(path), 0, -1):
            if tuple(path[:i]) in files:
                return tuple(path[:i])
        return None

    pattern = re.compile(r'\b(crate|super|self)((?:::\w+)+)')
    edges = {}
    for module, path in files.items():
        source = open(path).read()
        cut = source.find('#[cfg(test)]')
        if cut >= 0:
            source = source[:cut]
        source = re.sub(r'//[^\n]*', '', source)
        owns_dir = os.path.basename(path) in ('mod.rs', 'lib.rs', 'main.rs')
        # The module a `self::` path starts from, and its parent for `super::`.
        self_path = list(module)
        parent = list(module[:-1])
        targets = set()
        for kind, rest in pattern.findall(source):
            names = rest.split('::')[1:]
            base = {'crate': [], 'self': self_path, 'super': parent}[kind]
            if kind == 'super' and not owns_dir:
                base = parent
            target = resolve(base + names)
            if target and target != module:
                targets.add(target)
        edges[module] = targets
    return edges


def cycles(edges):
    index, low, stack, on_stack, found = {}, {}, [], set(), []
    counter = [0]
    sys.setrecursionlimit(10000)

    def visit(v):
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in edges[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            part = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                part.append(w)
                if w == v:
                    break
            if len(part) > 1:
                found.append(part)

    for v in edges:
        if v not in index:
            visit(v)
    return found


def main():
    root = sys.argv[1]
    edges = edges_of(modules(root))
    name = lambda m: '/'.join(m) or 'lib'
    found = cycles(edges)
    for part in found:
        print('cycle:', ', '.join(sorted(name(m) for m in part)))
        for m in sorted(part):
            inside = sorted(name(t) for t in edges[m] if t in part)
            print('   ', name(m), '->', ', '.join(inside))
    if not found:
        print(f'{root}: no cycles between files')
    sys.exit(1 if found else 0)


if __name__ == '__main__':
    main()
