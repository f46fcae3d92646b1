#!/usr/bin/env python3
"""Lists the import cycles between the files of a Rust crate.

An edge goes from a file to every module file it names through a
`crate::`, `super::` or `self::` path (code before `#[cfg(test)]` only,
comments dropped); a path names the longest module prefix that is a file,
and a name a module re-exports (`pub use`, as `crate::Entity` from the
crate root) names the file it comes from.
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


def reexports(files):
    """Maps `module path + (name,)` to the file a `pub use` there re-exports
    `name` from, so that `crate::Name` counts as naming the file that
    defines `Name` (followed through chains of re-exports)."""
    found = {}
    use_pattern = re.compile(r'pub(?:\([^)]*\))?\s+use\s+([^;]+);')
    for module, path in files.items():
        source = re.sub(r'//[^\n]*', '', open(path).read())
        for body in use_pattern.findall(source):
            body = ' '.join(body.split())
            prefix, _, group = body.partition('::{')
            if group:
                names = [n.strip() for n in group.rstrip('}').split(',')]
            else:
                prefix, _, last = body.rpartition('::')
                names = [last]
            parts = [p for p in prefix.split('::') if p]
            if parts and parts[0] == 'crate':
                parts = parts[1:]
            elif parts and parts[0] == 'self':
                parts = list(module) + parts[1:]
            elif parts and parts[0] == 'super':
                parts = list(module[:-1]) + parts[1:]
            else:
                parts = list(module) + parts
            for name in names:
                name = name.split(' as ')[-1].strip()
                original = name if ' as ' not in name else name
                if re.fullmatch(r'\w+', name):
                    found[tuple(module) + (name,)] = parts + [original]
    return found


def expand(body):
    """The paths of a use tree: `a::{b, c::{d, e}}` gives `a::b`,
    `a::c::d` and `a::c::e`."""
    head, brace, rest = body.partition('{')
    if not brace:
        return [body.strip()]
    depth, items, current = 1, [], ''
    for ch in rest:
        if ch == '{':
            depth += 1
        elif ch == '}':
            depth -= 1
            if depth == 0:
                break
        if ch == ',' and depth == 1:
            items.append(current)
            current = ''
        else:
            current += ch
    items.append(current)
    out = []
    for item in items:
        item = item.strip().split(' as ')[0].strip()
        if item and item != 'self':
            out.extend(expand(head + item))
        elif item == 'self':
            out.append(head.rstrip(':'))
    return out


def edges_of(files):
    exported = reexports(files)

    def resolve(path, depth=0):
        for i in range(len(path), 0, -1):
            if tuple(path[:i]) in files:
                return tuple(path[:i])
            through = exported.get(tuple(path[:i]))
            if through is not None and depth < 8:
                return resolve(through + list(path[i:]), depth + 1)
        return None

    pattern = re.compile(r'\b(crate|super|self)((?:::\w+)+)')
    use_pattern = re.compile(r'\buse\s+((?:crate|super|self)::[^;]*\{[^;]*);')
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
        # `use crate::{a::B, C}`: each path of the group, written out.
        paths = [m.group(0) for m in pattern.finditer(source)]
        for body in use_pattern.findall(source):
            paths.extend(expand(' '.join(body.split())))
        for kind, rest in (pattern.match(p).groups() for p in paths if pattern.match(p)):
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
