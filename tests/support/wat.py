"""Components written by hand in WAT, for tests that need what no toolchain builds: imports spelt
as a hostile author would spell them, a guest with no Python in it.

`sleeper(...)` is a component whose `run` subscribes to WASI's monotonic clock for `nanoseconds`
and blocks on the pollable (WASI's `pollable.block`), then answers `slept`; the names of its two
imports are parameters, so that one test can try every spelling of them.
"""

from __future__ import annotations

from typing import Final

CLOCK: Final = "wasi:clocks/monotonic-clock@0.2.0"
POLL: Final = "wasi:io/poll@0.2.0"
HOUR_NS: Final = 3_600_000_000_000


def sleeper(clock: str = CLOCK, poll: str = POLL, nanoseconds: int = HOUR_NS) -> str:
    """The WAT text of a component whose `run` sleeps `nanoseconds` in WASI (imports named `clock`, `poll`)."""
    return rf"""
(component
  (import "{poll}" (instance $poll
    (export "pollable" (type (sub resource)))
    (export "[method]pollable.block" (func (param "self" (borrow 0))))))
  (alias export $poll "pollable" (type $pollable))
  (import "{clock}" (instance $clock
    (alias outer 1 $pollable (type))
    (export "pollable" (type (eq 0)))
    (export "subscribe-duration" (func (param "when" u64) (result (own 1))))))
  (alias export $clock "subscribe-duration" (func $subscribe))
  (alias export $poll "[method]pollable.block" (func $block))
  (core module $mem
    (memory (export "memory") 1)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) (i32.const 1024)))
  (core instance $m (instantiate $mem))
  (alias core export $m "memory" (core memory $memory))
  (alias core export $m "realloc" (core func $realloc))
  (core func $sub (canon lower (func $subscribe)))
  (core func $blk (canon lower (func $block)))
  (core module $guest
    (import "wasi" "subscribe" (func $subscribe (param i64) (result i32)))
    (import "wasi" "block" (func $block (param i32)))
    (import "m" "memory" (memory 1))
    (data (i32.const 64) "slept")
    (func (export "run") (param i32 i32) (result i32)
      (call $block (call $subscribe (i64.const {nanoseconds})))
      (i32.store8 (i32.const 16) (i32.const 0))
      (i32.store (i32.const 20) (i32.const 64))
      (i32.store (i32.const 24) (i32.const 5))
      (i32.const 16)))
  (core instance $i (instantiate $guest
    (with "wasi" (instance (export "subscribe" (func $sub)) (export "block" (func $blk))))
    (with "m" (instance $m))))
  (func (export "run") (param "input" string) (result (result string (error string)))
    (canon lift (core func $i "run") (memory $memory) (realloc $realloc)))
)
"""


ECHO: Final = r"""
(component
  (core module $mem
    (memory (export "memory") 1)
    (global $next (mut i32) (i32.const 1024))
    (func (export "realloc") (param i32 i32 i32 i32) (result i32)
      (local $at i32)
      (local.set $at (global.get $next))
      (global.set $next (i32.add (local.get $at) (local.get 3)))
      (if (i32.gt_u (global.get $next) (i32.mul (memory.size) (i32.const 65536)))
        (then (if (i32.lt_s
                    (memory.grow (i32.add (i32.const 1)
                      (i32.div_u (i32.sub (global.get $next) (i32.mul (memory.size) (i32.const 65536)))
                                 (i32.const 65536))))
                    (i32.const 0))
                (then unreachable))))
      (local.get $at)))
  (core instance $m (instantiate $mem))
  (alias core export $m "memory" (core memory $memory))
  (alias core export $m "realloc" (core func $realloc))
  (core module $guest
    (import "m" "memory" (memory 1))
    (func (export "run") (param i32 i32) (result i32)
      (i32.store8 (i32.const 16) (i32.const 0))
      (i32.store (i32.const 20) (local.get 0))
      (i32.store (i32.const 24) (local.get 1))
      (i32.const 16)))
  (core instance $i (instantiate $guest (with "m" (instance $m))))
  (func (export "run") (param "input" string) (result (result string (error string)))
    (canon lift (core func $i "run") (memory $memory) (realloc $realloc)))
)
"""
"""A component whose `run` answers its input as it is (no imports, no Python)."""


def _answering(body: str, memories: str = "", answers: tuple[str, str] = ("fine", "refused")) -> str:
    """A component whose `run` runs `body` (core WAT leaving an i32 on the stack: nonzero answers
    `answers[0]`, zero `answers[1]`), with `memories` (core WAT) beside it."""
    yes, no = answers
    return rf"""
(component
  (core module $m
    (memory (export "memory") 1)
    (table $t 0 funcref)
    {memories}
    (data (i32.const 64) "{yes}")
    (data (i32.const 96) "{no}")
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) (i32.const 1024))
    (func (export "run") (param i32 i32) (result i32)
      (i32.store8 (i32.const 16) (i32.const 0))
      (if ({body})
        (then (i32.store (i32.const 20) (i32.const 64)) (i32.store (i32.const 24) (i32.const {len(yes)})))
        (else (i32.store (i32.const 20) (i32.const 96)) (i32.store (i32.const 24) (i32.const {len(no)}))))
      (i32.const 16)))
  (core instance $i (instantiate $m))
  (alias core export $i "memory" (core memory $memory))
  (alias core export $i "realloc" (core func $realloc))
  (func (export "run") (param "input" string) (result (result string (error string)))
    (canon lift (core func $i "run") (memory $memory) (realloc $realloc)))
)
"""


def table_grower(elements: int) -> str:
    """A component whose `run` grows a table by `elements`: `grown`, or `refused` when the growth fails."""
    body = f"i32.ne (table.grow $t (ref.null func) (i32.const {elements})) (i32.const -1)"
    return _answering(body, answers=("grown", "refused"))


def many_memories(count: int, pages: int) -> str:
    """A component of `count` core instances, each with a linear memory of `pages` pages (64 KiB each)
    made at instantiation; `run` answers `fine`."""
    holders = "\n".join(
        f'  (core module $h{index} (memory (export "m") {pages}))\n  (core instance $hi{index} (instantiate $h{index}))'
        for index in range(count)
    )
    return _answering("i32.const 1").replace(
        "(core instance $i (instantiate $m))", f"{holders}\n  (core instance $i (instantiate $m))"
    )


START_SPIN: Final = r"""
(component
  (core module $spin
    (func $forever (loop $again (br $again)))
    (start $forever))
  (core instance $s (instantiate $spin))
  (core module $m
    (memory (export "memory") 1)
    (func (export "realloc") (param i32 i32 i32 i32) (result i32) (i32.const 1024))
    (func (export "run") (param i32 i32) (result i32) (i32.const 16)))
  (core instance $i (instantiate $m))
  (alias core export $i "memory" (core memory $memory))
  (alias core export $i "realloc" (core func $realloc))
  (func (export "run") (param "input" string) (result (result string (error string)))
    (canon lift (core func $i "run") (memory $memory) (realloc $realloc)))
)
"""
"""A component whose start code (a core module's start function) never ends."""


def scribbler() -> str:
    """A component whose `run` answers `fresh` when its memory holds what its data segments wrote (a
    byte on the first page and one on a later host page), `dirty` otherwise; it overwrites the later one."""
    body = (
        "block (result i32)"
        " (i32.and (i32.eq (i32.load8_u (i32.const 64)) (i32.const 102))"
        " (i32.eq (i32.load8_u (i32.const 40000)) (i32.const 122)))"
        " (i32.store8 (i32.const 40000) (i32.const 121))"
    )
    return _answering(body, memories='(data (i32.const 40000) "z")', answers=("fresh", "dirty"))
