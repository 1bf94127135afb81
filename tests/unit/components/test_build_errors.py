"""A failed build shows the guest's own traceback, not componentize-py's wrapping of it.

The Python error comes first and readably, without componentize-py's raw dump around it
(`AssertionError: Traceback ...`, `/2/_agent_host_entry.py`); other output is left as it is.
"""

from __future__ import annotations

from agent_host.components.build import guest_traceback

COMPONENTIZE_PY_OUTPUT = """Traceback (most recent call last):
  File "<string>", line 1, in <module>
AssertionError: Traceback (most recent call last):
  File "/2/_agent_host_entry.py", line 3, in <module>
    import app as _guest
  File "/0/app.py", line 4
    def run(self, x:
           ^
SyntaxError: '(' was never closed


Caused by:
    SyntaxError: '(' was never closed (app.py, line 4)"""


def test_the_guests_traceback_is_kept_and_the_wrapping_dropped() -> None:
    assert guest_traceback(COMPONENTIZE_PY_OUTPUT) == (
        "Traceback (most recent call last):\n"
        '  File "app.py", line 4\n'
        "    def run(self, x:\n"
        "           ^\n"
        "SyntaxError: '(' was never closed"
    )


def test_other_output_is_left_as_it_is() -> None:
    assert guest_traceback("error: something else went wrong") == "error: something else went wrong"
