"""Compiling a component for this machine, in a child process that a signal can end at once.

`python -m agent_host.runtime.compiler WASM ARTIFACT` compiles WASM with the host's engine settings
(`engine_config`), its linear memory's data taken out first (`memory_image.split`), and writes the
image to ARTIFACT's `.image` (empty: no image), then the serialized artifact with its `.sha256`
sidecar, each atomically (temp file + rename): an artifact present means its image is whole. Exit
status: 0 done; `INVALID_COMPONENT` when WASM is not a component this host can run (the reason is
the first line on stderr); 1 anything else.

A compile takes ~10 s of native code that Python cannot interrupt; in a child process the host
stays responsive to signals and ends it on a stop request, and the ~300 MB the compiler leaves
behind are returned to the system when the child exits.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import sys
import tempfile
from pathlib import Path
from typing import Final

from wasmtime import Config, Engine, WasmtimeError
from wasmtime.component import Component

from agent_host.runtime import memory_image, memory_limit

ENGINE_SETTINGS: Final = "epoch_interruption=1" + (
    ",memory_init_cow=0,memory_image=1" if memory_limit.INSTALLED_BY_DEFAULT else ""
)
"""Everything about the engine's `Config` and the compiled input that changes compiled code; part of
the cache key (the host's memory creator needs `memory_init_cow` off and maps the memory image
itself: `runtime.memory_limit`, `runtime.memory_image`)."""

IMAGE: Final = ".image"
"""Suffix of an artifact's memory image beside it (`memory_image`; empty when it has none)."""

INVALID_COMPONENT: Final = 2
"""Exit status of the compiler when the input is not a component this host can run."""


def engine_config() -> Config:
    """The `Config` of every engine of the host (what `ENGINE_SETTINGS` describes)."""
    config = Config()
    config.epoch_interruption = True
    memory_limit.install(config)
    return config


def split(wasm: bytes) -> memory_image.Split:
    """`memory_image.split` when the host's memory creator maps images (else the wasm as it is)."""
    if not memory_limit.INSTALLED_BY_DEFAULT:
        return memory_image.Split(wasm, None)
    return memory_image.split(wasm, mmap.PAGESIZE)


def store_artifact(artifact: Path, serialized: bytes, image: bytes) -> None:
    """Write `artifact`'s memory image (`IMAGE`; empty: none), then `artifact`, then its `.sha256`
    sidecar (the artifact's digest, then the image's, a line each), each atomically."""
    artifact.parent.mkdir(parents=True, exist_ok=True)
    digests = f"{hashlib.sha256(serialized).hexdigest()}\n{hashlib.sha256(image).hexdigest()}\n"
    writes = (
        (artifact.with_suffix(IMAGE), image),
        (artifact, serialized),
        (artifact.with_suffix(".sha256"), digests.encode()),
    )
    for path, body in writes:
        fd, tmp = tempfile.mkstemp(dir=artifact.parent, prefix=".tmp-")
        try:
            with os.fdopen(fd, "wb") as out:
                out.write(body)
            os.replace(tmp, path)
        except BaseException:
            Path(tmp).unlink(missing_ok=True)
            raise


def first_line(text: str) -> str:
    return text.strip().splitlines()[0] if text.strip() else "unknown error"


def main(argv: list[str]) -> int:
    wasm, artifact = Path(argv[0]), Path(argv[1])
    try:
        taken = split(wasm.read_bytes())
        component = Component(Engine(engine_config()), taken.wasm)
    except WasmtimeError as exc:
        print(first_line(str(exc)), file=sys.stderr)  # noqa: T201 - the parent reads it
        return INVALID_COMPONENT
    store_artifact(artifact, bytes(component.serialize()), taken.image.data if taken.image is not None else b"")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
