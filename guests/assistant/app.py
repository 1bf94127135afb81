"""An LLM agent: answers its input with a model that may call the demo tooling's tools.

Granted `providers = ["llm"]` and `toolings = ["demo"]`, it asks the model; each tool call the model
makes runs through the tooling, its answer goes back, until the model answers without calls
(agentlib's `run_agent`, at most 8 chats).
"""

from agentlib import agent, provider, run_agent, tooling

llm = provider("llm")
demo = tooling("demo")


@agent
def run(input: str) -> str:
    return run_agent(llm, demo, input, system="Use the tools to answer.")
