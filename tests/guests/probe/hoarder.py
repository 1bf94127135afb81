"""The probe's hoarder (it was the `hoarder` test guest): it holds host file descriptors. It opens
what its input names in a loop and keeps every one open, then reports how many it got and the
first error it met.

Input: {"path": "/data", "how": "files" | "dirs" | "scandir" | "streams", "count": N,
        "wait_for": "/data/go", "hold_until": "/data/end", "sleep_ms": M (each optional)}
- files: `os.open` of the file `path/f` N times; dirs: `os.open` of the folder `path` N times;
- scandir: N `os.scandir(path)` iterators, each started (a directory stream held open);
- streams: N `open(path/f, "rb")` file objects, each read once.
- wait_for: first print `waiting` on stdout, then wait (10 ms sleeps) until that file exists;
- hold_until: after opening, print `holding K` on stdout, then keep them until that file exists;
- sleep_ms: after opening (and printing `holding K`), keep them through one sleep of M ms (no wasm
  runs meanwhile: only the host's watcher can see them).
The caller's wall-clock limit bounds every wait. Output: {"held": K, "error": "..." or null}.
Written against wit/ alone.
"""

import json
import os
import sys
import time


def wait_until(path: str) -> None:
    while not os.path.exists(path):
        time.sleep(0.01)


def run(input: str) -> str:
    request = json.loads(input)
    path, how, count = request["path"], request["how"], int(request["count"])
    if request.get("wait_for"):
        print("waiting", flush=True)
        wait_until(request["wait_for"])
    held: list[object] = []
    error = None
    try:
        for _ in range(count):
            if how == "files":
                held.append(os.open(path + "/f", os.O_RDONLY))
            elif how == "dirs":
                held.append(os.open(path, os.O_RDONLY | os.O_DIRECTORY))
            elif how == "scandir":
                entries = os.scandir(path)
                next(entries, None)
                held.append(entries)
            elif how == "streams":
                handle = open(path + "/f", "rb")
                handle.read(1)
                held.append(handle)
            else:
                raise ValueError(f"unknown how {how!r}")
    except OSError as exc:
        error = f"{type(exc).__name__}: {exc}"
    if request.get("hold_until") or request.get("sleep_ms"):
        print(f"holding {len(held)}", flush=True)
    if request.get("sleep_ms"):
        time.sleep(int(request["sleep_ms"]) / 1000)
    if request.get("hold_until"):
        wait_until(request["hold_until"])
    sys.stdout.flush()
    return json.dumps({"held": len(held), "error": error})
