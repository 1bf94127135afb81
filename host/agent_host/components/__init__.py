"""Guest components from source: builds (componentize-py), bindings for editors and the `agent-host
new` templates.
"""
