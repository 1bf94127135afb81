"""The WIT reference: every world, interface, type, case and function of `wit/*.wit`, with its `///` comment.

A small line parser of the WIT this project writes: one item per line (a function's signature may
run over several lines, up to its `;`), `///` comments above the item they document, blocks closed
by `}`. It knows `package`, `world` (`import`, `export`, exported functions), `interface` (`use`,
`type` aliases, `record`, `variant`, `enum`, `flags`, `resource` with its methods, functions). A
line it does not understand raises `ValueError` naming the file and line, so the docs build fails
rather than leave an item out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

BLOCKS: Final = ("world", "interface", "resource", "record", "variant", "enum", "flags")
"""Keywords that open a `{ ... }` block."""
CASE_BLOCKS: Final = ("variant", "enum", "flags")
_OPEN = re.compile(r"^(" + "|".join(BLOCKS) + r")\s+([a-z][a-z0-9-]*)\s*\{$")
_FUNC = re.compile(r"^(export\s+)?(%?[a-z][a-z0-9-]*)\s*:\s*(func\b.*);$")
_FIELD = re.compile(r"^(%?[a-z][a-z0-9-]*)\s*:\s*(.+?),?$")
_CASE = re.compile(r"^(%?[a-z][a-z0-9-]*)(\((.+)\))?,?$")
_USE = re.compile(r"^(use|import|export|include)\s+([^;]+);$")
_ALIAS = re.compile(r"^type\s+([a-z][a-z0-9-]*)\s*=\s*(.+);$")
_PACKAGE = re.compile(r"^package\s+([^;]+);$")


@dataclass
class Item:
    """One documented WIT item: `kind` is a block keyword, `func`, `field`, `case`, `type`, or a `use`-like line."""

    kind: str
    name: str
    doc: str = ""
    signature: str = ""
    children: list[Item] = field(default_factory=list)

    def walk(self) -> Iterator[Item]:
        yield self
        for child in self.children:
            yield from child.walk()


@dataclass
class WitFile:
    path: str
    package: str | None
    items: list[Item]


def parse(text: str, path: str = "<wit>") -> WitFile:
    """The items of one WIT file, nested as written, each with the `///` comment above it."""
    package = None
    root = Item("file", path)
    stack = [root]
    doc: list[str] = []
    lines = iter(enumerate(text.splitlines(), start=1))
    for number, raw in lines:
        line = raw.strip()
        if line.startswith("///"):
            rest = line[3:]
            doc.append(rest[1:] if rest.startswith(" ") else rest)
            continue
        if not line or line.startswith("//"):
            if not line and doc:
                doc.append("")
            continue
        while ": func" in line and not line.endswith(";"):  # a signature over several lines
            _, more = next(lines, (number, ";"))
            line = f"{line} {more.strip()}"
        comment = "\n".join(doc).strip()
        doc = []
        parent = stack[-1]
        if line == "}":
            if len(stack) == 1:
                raise ValueError(f"{path}:{number}: '}}' closes no block")
            stack.pop()
            continue
        if match := _PACKAGE.match(line):
            package = match.group(1).strip()
            continue
        if match := _OPEN.match(line):
            item = Item(match.group(1), match.group(2), comment)
            parent.children.append(item)
            stack.append(item)
            continue
        if parent.kind in CASE_BLOCKS:
            if match := _CASE.match(line):
                payload = match.group(3)
                parent.children.append(Item("case", match.group(1), comment, payload or ""))
                continue
        elif match := _FUNC.match(line):
            kind = "export" if match.group(1) else "func"
            parent.children.append(Item(kind, match.group(2), comment, match.group(3)))
            continue
        elif parent.kind == "record" and (match := _FIELD.match(line)):
            parent.children.append(Item("field", match.group(1), comment, match.group(2)))
            continue
        elif match := _USE.match(line):
            parent.children.append(Item(match.group(1), match.group(2).strip(), comment))
            continue
        elif match := _ALIAS.match(line):
            parent.children.append(Item("type", match.group(1), comment, match.group(2)))
            continue
        raise ValueError(
            f"{path}:{number}: the WIT reference cannot read {line!r} (inside {parent.kind} {parent.name})"
        )
    if len(stack) != 1:
        raise ValueError(f"{path}: {stack[-1].kind} {stack[-1].name} is not closed")
    return WitFile(path, package, root.children)


def parse_folder(folder: Path) -> list[WitFile]:
    """Every `.wit` file of `folder`: those that define a world first (what a guest is), then by name."""
    files = [parse(file.read_text(encoding="utf-8"), file.name) for file in sorted(folder.glob("*.wit"))]
    return sorted(files, key=lambda wit: not any(item.kind == "world" for item in wit.items))


def _doc(item: Item) -> str:
    """The item's comment as markdown: a list that follows a line of text gets the blank line before it
    that markdown needs (WIT comments write `Guarantees:` then `- FIFO: ...`)."""
    lines: list[str] = []
    for line in item.doc.splitlines():
        if line.startswith("- ") and lines and lines[-1] and not lines[-1].startswith(("- ", "  ")):
            lines.append("")
        lines.append(line)
    return "\n".join(lines) + "\n" if lines else ""


def _members(items: Iterable[Item], label: str) -> list[str]:
    """A record's fields or a variant's/enum's cases as a list, each with its comment."""
    out = []
    for item in items:
        shape = f"`{item.name}`" + (f": `{item.signature}`" if item.signature and label == "field" else "")
        if item.signature and label == "case":
            shape = f"`{item.name}({item.signature})`"
        text = item.doc.replace("\n\n", " ").replace("\n", " ")
        out.append(f"- {shape}" + (f": {text}" if text else ""))
    return out


def _render(item: Item, owner: str, level: int) -> list[str]:
    heading = "#" * level
    anchor = f"{owner}-{item.name}".strip("-")
    if item.kind in ("func", "export"):
        prefix = "export " if item.kind == "export" else ""
        return [
            f"{heading} `{item.name}` {{#wit-{anchor}}}\n",
            f"```wit\n{prefix}{item.name}: {item.signature};\n```\n",
            _doc(item),
        ]
    if item.kind in ("record", "variant", "enum", "flags"):
        label = "field" if item.kind == "record" else "case"
        return [
            f"{heading} {item.kind} `{item.name}` {{#wit-{anchor}}}\n",
            _doc(item),
            *_members(item.children, label),
            "",
        ]
    if item.kind == "type":
        return [
            f"{heading} type `{item.name}` {{#wit-{anchor}}}\n",
            f"```wit\ntype {item.name} = {item.signature};\n```\n",
            _doc(item),
        ]
    if item.kind in ("use", "import", "include"):
        return []  # listed with their block
    if item.kind in ("world", "interface", "resource"):
        out = [f"{heading} {item.kind} `{item.name}` {{#wit-{anchor}}}\n", _doc(item)]
        uses = [f"`{c.kind} {c.name}`" for c in item.children if c.kind in ("use", "import", "include")]
        if uses:
            out.append(", ".join(uses) + "\n")
        for child in item.children:
            out.extend(_render(child, f"{owner}-{item.name}" if item.kind == "resource" else item.name, level + 1))
        return out
    raise ValueError(f"the WIT reference cannot render a {item.kind} ({item.name})")


def markdown(files: Iterable[WitFile]) -> str:
    """The reference as markdown: the package, then each file's worlds and interfaces in order."""
    files = list(files)
    packages = sorted({f.package for f in files if f.package})
    out = [f"Package `{', '.join(packages)}`.\n"] if packages else []
    for wit in files:
        out.append(f"## `{wit.path}`\n")
        for item in wit.items:
            out.extend(_render(item, "", 3))
    return "\n".join(line for line in out if line is not None)
