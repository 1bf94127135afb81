"""Component tests: real guests built with componentize-py, run in wasmtime, against real servers."""
