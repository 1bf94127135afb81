"""A component's linear-memory image, taken out of its data segments so the host can map it copy-on-write.

The host allocates linear memories itself (`memory_limit`: a refused growth is host state), where
wasmtime copies every data segment into each new memory (11.7 MiB for a Python guest). `split` moves the data of the
component's one linear memory into an `Image` (page-aligned bytes) and leaves the active segments
empty (same count, flags and offsets: indices, `memory.init` and `data.drop` behave as before); the
memory creator maps the image into each memory of that component. Anything this module does not
read with certainty (several memory-defining modules, 64-bit memories, custom page sizes, an offset
that is not a constant, a segment past the memory's initial size), or whose image would be mostly
zeros (`MAX_ZEROS`), leaves the component whole: wasmtime copies its segments as before. Pure bytes
in and out (no engine), in time and memory linear in the component's size.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

PAGE: Final = 65536
"""A wasm page, in bytes."""

MAX_ZEROS: Final = 16 * 1024 * 1024
"""Bytes of zeros (between and before the segments) an image may hold beyond `ZEROS_PER_BYTE` per byte
of data: an image is bounded by the data the component holds, whatever offsets it declares."""
ZEROS_PER_BYTE: Final = 4

_MODULE_HEADER: Final = b"\0asm\x01\x00\x00\x00"
_COMPONENT_HEADER: Final = b"\0asm\x0d\x00\x01\x00"
_CORE_MODULE_SECTION: Final = 1
_NESTED_COMPONENT_SECTION: Final = 4
_IMPORT_SECTION: Final = 2
_MEMORY_SECTION: Final = 5
_DATA_SECTION: Final = 11
_I32_CONST: Final = 0x41
_END: Final = 0x0B
_IMPORTED_MEMORY: Final = 0x02


class _Unsure(Exception):
    """The bytes are not what this module reads with certainty: the component stays whole."""


@dataclass(frozen=True)
class Image:
    """The initial contents of a component's one linear memory."""

    data: bytes
    """The memory's first `len(data)` bytes (a multiple of the host's page size); the rest are zero."""
    minimum: int
    """Bytes the memory has when made (its type's minimum): `data` fits in them."""


@dataclass(frozen=True)
class Split:
    wasm: bytes
    """The component, its memory's active segments emptied (unchanged when `image` is None)."""
    image: Image | None


def split(component: bytes, host_page: int = 4096) -> Split:
    """`component` with its one linear memory's data taken out as an `Image` padded to `host_page`;
    unchanged with no image when it is not a component of exactly one memory this module reads."""
    try:
        return _split(component, host_page)
    except (_Unsure, IndexError):
        return Split(component, None)


def _split(component: bytes, host_page: int) -> Split:
    if not component.startswith(_COMPONENT_HEADER):
        raise _Unsure("not a component")
    modules = _modules(component, len(_COMPONENT_HEADER), len(component), top=True)
    defining = [(top, span) for top, span in modules if _defined_memories(component[span[1] : span[2]]) > 0]
    if len(defining) != 1 or not defining[0][0]:
        raise _Unsure("not one memory-defining module at the top level")
    size_at, start, end = defining[0][1]
    module, image = _take_data(component[start:end], host_page)
    if image is None:
        raise _Unsure("no data")
    return Split(component[:size_at] + _leb(len(module)) + module + component[end:], image)


def _modules(component: bytes, position: int, end: int, top: bool) -> list[tuple[bool, tuple[int, int, int]]]:
    """(at the top level, (size position, start, end)) of every core module in `component[position:end]`,
    nested components included (walked with a stack of their own: nesting costs no recursion). A
    core module the component imports would come from the host's linker, which defines none: such
    a component does not instantiate."""
    found: list[tuple[bool, tuple[int, int, int]]] = []
    pending = [(position, end, top)]
    while pending:
        position, end, top = pending.pop()
        while position < end:
            section = component[position]
            size, start = _u32(component, position + 1)
            stop = start + size
            if stop > end:
                raise _Unsure("truncated section")
            if section == _CORE_MODULE_SECTION:
                found.append((top, (position + 1, start, stop)))
            elif section == _NESTED_COMPONENT_SECTION:
                if not component.startswith(_COMPONENT_HEADER, start):
                    raise _Unsure("nested component header")
                pending.append((start + len(_COMPONENT_HEADER), stop, False))
            position = stop
    return found


def _module_sections(module: bytes) -> list[tuple[int, int, int, int]]:
    """(id, size position, start, end) of every section of a core module."""
    if not module.startswith(_MODULE_HEADER):
        raise _Unsure("not a core module")
    position, found = len(_MODULE_HEADER), []
    while position < len(module):
        section = module[position]
        size, start = _u32(module, position + 1)
        if start + size > len(module):
            raise _Unsure("truncated module section")
        found.append((section, position + 1, start, start + size))
        position = start + size
    return found


def _defined_memories(module: bytes) -> int:
    for section, _size_at, start, _end in _module_sections(module):
        if section == _MEMORY_SECTION:
            return _u32(module, start)[0]
    return 0


def _imported_memories(module: bytes, start: int, end: int) -> int:
    """Memories among the imports of the import section at `start:end`."""
    count, position = _u32(module, start)
    memories = 0
    for _ in range(count):
        for _name in range(2):
            length, position = _u32(module, position)
            position += length
        kind = module[position]
        position += 1
        if kind == 0x00:  # function: a type index
            _, position = _u32(module, position)
        elif kind == 0x01:  # table: a reference type, then limits
            if module[position] not in (0x70, 0x6F):
                raise _Unsure("table of a typed reference")
            position = _limits(module, position + 1)[2]
        elif kind == _IMPORTED_MEMORY:
            memories += 1
            position = _limits(module, position)[2]
        elif kind == 0x03:  # global: a value type and mutability
            if module[position] not in (0x7F, 0x7E, 0x7D, 0x7C, 0x7B, 0x70, 0x6F):
                raise _Unsure("global of a typed reference")
            position += 2
        elif kind == 0x04:  # tag
            _, position = _u32(module, position + 1)
        else:
            raise _Unsure("unknown import kind")
    if position != end:
        raise _Unsure("import section length")
    return memories


def _limits(data: bytes, position: int) -> tuple[int, int, int]:
    """(flags, minimum, position after) of limits; only plain 32-bit memories and tables."""
    flags = data[position]
    if flags not in (0x00, 0x01):
        raise _Unsure("shared, 64-bit or custom-page limits")
    minimum, position = _u32(data, position + 1)
    if flags == 0x01:
        _, position = _u32(data, position)
    return flags, minimum, position


def _take_data(module: bytes, host_page: int) -> tuple[bytes, Image | None]:
    """`module` with the active segments of its one defined memory emptied, and that memory's image."""
    sections = _module_sections(module)
    imported = 0
    minimum = -1
    data_span: tuple[int, int, int] | None = None
    for section, size_at, start, end in sections:
        if section == _IMPORT_SECTION:
            imported = _imported_memories(module, start, end)
        elif section == _MEMORY_SECTION:
            count, position = _u32(module, start)
            if count != 1:
                raise _Unsure("a module of several memories")
            minimum = _limits(module, position)[1] * PAGE
        elif section == _DATA_SECTION:
            data_span = (size_at, start, end)
    if data_span is None or minimum < 0:
        return module, None
    size_at, start, end = data_span
    body, extent, pieces = _empty_segments(module, start, end, imported, minimum)
    if not pieces:
        return module, None
    data = sum(len(piece) for _, piece in pieces)
    if extent - data > MAX_ZEROS + ZEROS_PER_BYTE * data:
        raise _Unsure("an image mostly of zeros")  # wasmtime writes the segments where they go
    image = bytearray(-(-extent // host_page) * host_page)
    for offset, piece in pieces:
        image[offset : offset + len(piece)] = piece
    return module[:size_at] + _leb(len(body)) + body + module[end:], Image(bytes(image), minimum)


def _empty_segments(
    module: bytes, start: int, end: int, memory: int, minimum: int
) -> tuple[bytes, int, list[tuple[int, bytes]]]:
    """The data section's body with memory `memory`'s active segments emptied, the image's extent,
    and the (offset, bytes) of those segments in order (a later one overwrites an earlier one)."""
    count, position = _u32(module, start)
    out = bytearray(_leb(count))
    pieces: list[tuple[int, bytes]] = []
    extent = 0
    for _ in range(count):
        segment = position
        flags, after_flags = _u32(module, position)
        if flags == 1:  # passive: kept as it is
            length, at = _u32(module, after_flags)
            out += module[position : at + length]
            position = at + length
            continue
        if flags == 0:
            target, at = 0, after_flags
        elif flags == 2:
            target, at = _u32(module, after_flags)
        else:
            raise _Unsure("unknown segment flags")
        if module[at] != _I32_CONST:
            raise _Unsure("an offset that is not a constant")
        offset, at = _s32(module, at + 1)
        if module[at] != _END:
            raise _Unsure("an offset expression of more than one constant")
        length, bytes_at = _u32(module, at + 1)
        head = module[position : at + 1]
        position = bytes_at + length
        if target != memory:  # another (imported) memory's segment: left in place
            out += module[segment:position]
            continue
        if offset < 0 or offset + length > minimum:
            raise _Unsure("a segment past the memory's initial size")
        if length:
            pieces.append((offset, module[bytes_at:position]))
            extent = max(extent, offset + length)
        out += head + _leb(0)
    if position != end:
        raise _Unsure("data section length")
    return bytes(out), extent, pieces


def _u32(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result, position
        shift += 7
        if shift > 28:
            raise _Unsure("LEB128 too long")


def _s32(data: bytes, position: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        byte = data[position]
        position += 1
        result |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            if byte & 0x40:
                result -= 1 << shift
            return result, position
        if shift > 28:
            raise _Unsure("LEB128 too long")


def _leb(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)
