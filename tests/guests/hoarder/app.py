"""A test guest that holds host file descriptors: it opens what its input names in a loop and keeps
every one open, then reports how many it got and the first error it met.

Input: {"path": "/data", "how": "files" | "dirs" | "scandir" | "streams", "count": N}
- files: `os.open` of the file `path/f` N times; dirs: `os.open` of the folder `path` N times;
- scandir: N `os.scandir(path)` iterators, each started (a directory stream held open);
- streams: N `open(path/f, "rb")` file objects, each read once.
Output: {"held": K, "error": "..." or null}. Written against wit/ alone.
"""

import json
import os

import wit_world


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        request = json.loads(input)
        path, how, count = request["path"], request["how"], int(request["count"])
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
        return json.dumps({"held": len(held), "error": error})
