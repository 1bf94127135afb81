"""Generators of the documentation site's reference pages (used by `docs/hooks/reference_pages.py`).

`config_reference` renders the config file's JSON Schema (made from the pydantic models) as tables;
`wit_reference` parses the WIT files' `///` comments into a page. Each returns markdown from the
sources alone, so a key or WIT function added in code appears in the site with no other edit
(tests/unit/docs/ checks every model field and WIT function is in the output).
"""
