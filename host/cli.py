"""The `agent-host` command line.

stdout carries only results (a guest's answer, a tool's result, a built component's path, the
WIT), so they can be piped; logs, progress, guest output and errors go to stderr. Errors are
printed as one line (`agent-host: error: ...` plus a hint) with the traceback only under
`--debug`. Exit codes come from `status_codes`: 0 ok, 1 the guest (or a called tool) returned an
error, 2 usage/config/build error or an unreachable tooling, 3 trap or limit, 130 interrupted.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from host import status_codes
from host.app import Host
from host.approval import ApproveAll, Approver, DenyAll, TerminalApprover
from host.builder import build_guest, copy_to, resolve_component
from host.config import (
    DEFAULT_FILE_NAME,
    AgentConfig,
    Config,
    find_config_file,
    load_config,
    starter_config_text,
)
from host.errors import ErrorCode, HostError, ToolingError, UsageError
from host.paths import wit_dir

logger = logging.getLogger("host")

DESCRIPTION: Final = """\
Run AI agents compiled to WebAssembly components. A guest reaches the world only through named
toolings (MCP servers over stdio or streamable HTTP) configured in agent-host.toml; without a
config file the embedded default offers tooling "demo", an MCP server bundled with the host."""

EPILOG: Final = """\
exit codes: 0 ok, 1 the guest returned an error, 2 usage or configuration error, 3 trap or limit.
config file: --config FILE, else $AGENT_HOST_CONFIG, else ./agent-host.toml, else the embedded default."""

GUEST_TEMPLATE: Final = '''\
"""Agent {name}: lists the tools of tooling "demo" and calls one."""

import json

import wit_world
from componentize_py_types import Err
from wit_world.imports import log, tooling


class WitWorld(wit_world.WitWorld):
    def run(self, input: str) -> str:
        log.log(log.Level.INFO, f"{name} got {{len(input)}} characters of input")
        try:
            with tooling.get("demo") as demo:
                names = [tool.name for tool in demo.list_tools()]
                result = demo.call_tool_blocking("echo", json.dumps({{"text": input or "hello"}}))
        except Err as failure:
            raise Err(f"{{failure.value.code.name}}: {{failure.value.message}}")
        return json.dumps({{"tools": names, "echo": json.loads(result.value)}})
'''


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    _setup_logging(args.debug)
    handler: Callable[[argparse.Namespace], int] = args.handler
    try:
        return handler(args)
    except HostError as exc:
        logger.debug("details", exc_info=True)
        print(f"agent-host: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except ToolingError as exc:
        logger.debug("details", exc_info=True)
        print(f"agent-host: error: {exc}", file=sys.stderr)
        return status_codes.GUEST_ERROR if exc.code is ErrorCode.TOOL_FAILED else status_codes.USAGE_ERROR
    except KeyboardInterrupt:
        print("agent-host: cancelled by user", file=sys.stderr)
        return status_codes.INTERRUPTED


def _parser() -> argparse.ArgumentParser:
    # The shared options are accepted before and after the subcommand. Copies on subcommands
    # default to SUPPRESS so that they do not overwrite a value given before the subcommand.
    top = argparse.ArgumentParser(add_help=False)
    common = argparse.ArgumentParser(add_help=False)
    for parser_, default in ((top, None), (common, argparse.SUPPRESS)):
        parser_.add_argument(
            "--config", metavar="FILE", default=default, help="configuration file (default: see below)"
        )
        parser_.add_argument(
            "--debug", action="store_true", default=default or False, help="verbose logs, tracebacks, keep server logs"
        )

    parser = argparse.ArgumentParser(
        prog="agent-host",
        description=DESCRIPTION,
        epilog=EPILOG,
        parents=[top],
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help_text: str, description: str) -> argparse.ArgumentParser:
        return sub.add_parser(
            name, help=help_text, description=description, epilog=EPILOG, parents=[common],
            formatter_class=argparse.RawDescriptionHelpFormatter,
        )  # fmt: skip

    run = command(
        "run",
        "run a guest (folder, built on demand, or .wasm), or every configured agent",
        "Run GUEST's run(input) in a sandbox and print the string it returns on stdout.\n"
        "GUEST is a guest folder (built with componentize-py on demand, cached) or a .wasm component.\n"
        "With --agent NAME, the [agents.NAME] table gives the component, input, grants and limits.\n"
        "Without GUEST and --agent, every [agents.*] runs at once, sharing connections; a table of\n"
        "outcomes follows and the exit code is the worst one.\n"
        "A guest may use only the toolings it is granted: [agents.NAME] toolings, or --allow\n"
        "(the embedded default configuration grants its tooling demo). SIGINT/SIGTERM stop every\n"
        "guest and cancel what they opened; a second signal exits at once.",
    )
    run.add_argument("guest", nargs="?", metavar="GUEST", help="guest folder or .wasm file")
    run.add_argument("--input", metavar="TEXT|@FILE|-", help="input for run(): text, @file, or - for stdin")
    run.add_argument("--agent", metavar="NAME", help="use the settings of [agents.NAME]")
    run.add_argument(
        "--allow", action="append", default=[], metavar="TOOLING", help="grant a tooling (repeatable; globs: '*' = all)"
    )
    run.add_argument("--json", action="store_true", help="with several agents: print the outcomes as JSON")
    run.add_argument(
        "--approve",
        choices=("deny", "ask", "all"),
        default="deny",
        help="calls needing approval (require_approval): deny (default), ask on the terminal, approve all",
    )
    run.add_argument("--module", metavar="NAME", help="module defining WitWorld (default: app.py)")
    run.set_defaults(handler=_cmd_run)

    build = command(
        "build",
        "build a guest folder into a component",
        "Build GUEST (a folder with app.py) into a WebAssembly component with componentize-py.\n"
        "The result is cached by content; its path is printed on stdout.",
    )
    build.add_argument("guest", metavar="GUEST", help="guest folder")
    build.add_argument("--module", metavar="NAME", help="module defining WitWorld (default: app.py)")
    build.add_argument("-o", "--output", metavar="PATH", help="also copy the component to PATH")
    build.add_argument("--force", action="store_true", help="rebuild even when the cache is current")
    build.set_defaults(handler=_cmd_build)

    new = command("new", "create a guest folder from a template", "Create DIR/NAME/app.py, a minimal agent.")
    new.add_argument("name", metavar="NAME", help="agent name (a folder name)")
    new.add_argument("--dir", default="guests", metavar="DIR", help="parent folder (default: guests)")
    new.set_defaults(handler=_cmd_new)

    tools = command(
        "tools",
        "list the tools (and resources) of the configured toolings",
        "Connect to TOOLING (default: every configured tooling) and list its tools and resources.",
    )
    tools.add_argument("tooling", nargs="?", metavar="TOOLING")
    tools.add_argument("--json", action="store_true", help="print JSON instead of a table")
    tools.set_defaults(handler=_cmd_tools)

    call = command(
        "call",
        "call one tool from the host and print its result",
        "Call TOOL of TOOLING with ARGS (a JSON object, default {}) and print the MCP result as JSON.\n"
        "Exit code 1 when the tool reports an error.",
    )
    call.add_argument("tooling", metavar="TOOLING")
    call.add_argument("tool", metavar="TOOL")
    call.add_argument("arguments", nargs="?", default="{}", metavar="ARGS")
    call.set_defaults(handler=_cmd_call)

    config = command("config", "write or check a configuration file", "Write a starter file, or validate one.")
    config_sub = config.add_subparsers(dest="config_command", required=True, metavar="ACTION")
    init = config_sub.add_parser("init", help="write a commented starter file", parents=[common])
    init.add_argument("path", nargs="?", default=DEFAULT_FILE_NAME, metavar="PATH")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    init.set_defaults(handler=_cmd_config_init)
    check = config_sub.add_parser("check", help="validate a configuration file", parents=[common])
    check.add_argument("path", nargs="?", metavar="PATH", help="file to check (default: the one in use)")
    check.set_defaults(handler=_cmd_config_check)

    wit = command("wit", "print the WIT contract guests are written against", "Print every file of the WIT package.")
    wit.add_argument("--path", action="store_true", help="print the folder holding the WIT files instead")
    wit.set_defaults(handler=_cmd_wit)
    return parser


def _setup_logging(debug: bool) -> None:
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(_Formatter())
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.DEBUG if debug else logging.WARNING)
    logging.getLogger("host").setLevel(logging.DEBUG if debug else logging.INFO)
    # The SDK logs transport faults with tracebacks; the host reports them itself, in one line.
    logging.getLogger("mcp").setLevel(logging.DEBUG if debug else logging.CRITICAL)


class _Formatter(logging.Formatter):
    def format(self, record: logging.LogRecord) -> str:
        if record.name == "host.guest":
            return (
                f"{record.getMessage()}"
                if record.levelno == logging.INFO
                else f"{record.levelname.lower()}: {record.getMessage()}"
            )
        text = f"agent-host: {record.getMessage()}"
        if record.levelno >= logging.WARNING:
            text = f"agent-host: {record.levelname.lower()}: {record.getMessage()}"
        if record.exc_info and logging.getLogger("host").isEnabledFor(logging.DEBUG):
            text += "\n" + self.formatException(record.exc_info)
        return text


def _config(args: argparse.Namespace) -> Config:
    return load_config(find_config_file(args.config))


def _read_input(spec: str | None, agent: AgentConfig | None) -> str:
    if spec is None:
        return agent.input if agent is not None and agent.input is not None else ""
    if spec == "-":
        return sys.stdin.read()
    if spec.startswith("@"):
        try:
            return Path(spec[1:]).read_text(encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"--input {spec}: cannot read: {exc.strerror or exc}") from None
    return spec


def _cmd_run(args: argparse.Namespace) -> int:
    config = _config(args)
    if args.guest is None and args.agent is None:
        return _run_all(config, args)
    agent: AgentConfig | None = None
    if args.agent is not None:
        agent = config.agents.get(args.agent)
        if agent is None:
            raise UsageError(
                f"--agent {args.agent}: no [agents.{args.agent}] table in {config.describe_source()}",
                hint=f"defined agents: {', '.join(sorted(config.agents)) or '(none)'}",
            )
    if args.guest is not None:
        spec = Path(args.guest)
    elif agent is not None and agent.component is not None:
        spec = agent.component
    else:
        raise UsageError(f"[agents.{args.agent}] has no `component`; give a GUEST (folder or .wasm)")
    wasm = resolve_component(spec, module=args.module)
    input_text = _read_input(args.input, agent)
    name = agent.name if agent is not None else spec.stem if spec.suffix == ".wasm" else spec.resolve().name
    with _signals() as stopper, Host(config, keep_logs=args.debug, approver=_approver(args.approve)) as host:
        stopper.host = host
        outcome = host.run(wasm, input_text, agent=name, policy=host.policy(name, agent, args.allow))
    if outcome.status == "ok":
        sys.stdout.write(outcome.text)
        if sys.stdout.isatty() and not outcome.text.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
    elif outcome.status == "error":
        print(f"agent-host: agent {name} returned an error: {outcome.text}", file=sys.stderr)
    else:
        print(f"agent-host: agent {name} was stopped: {outcome.text}", file=sys.stderr)
    logger.debug("agent %s: %s in %.2f s", name, outcome.status, outcome.duration)
    return status_codes.INTERRUPTED if stopper.received else outcome.exit_code


def _run_all(config: Config, args: argparse.Namespace) -> int:
    """Run every [agents.*] concurrently; a table (or JSON) of outcomes on stdout; the worst exit code."""
    if not config.agents:
        raise UsageError(
            f"nothing to run: give a GUEST (folder or .wasm) or --agent NAME; {config.describe_source()} "
            "defines no [agents.*] tables"
        )
    missing = [name for name, agent in config.agents.items() if agent.component is None]
    if missing:
        raise UsageError(f"agents without `component`: {', '.join(sorted(missing))} ({config.describe_source()})")
    components = {
        name: resolve_component(agent.component) for name, agent in sorted(config.agents.items()) if agent.component
    }
    with _signals() as stopper, Host(config, keep_logs=args.debug, approver=_approver(args.approve)) as host:
        stopper.host = host
        started = {
            name: host.start(
                wasm, _read_input(args.input, config.agents[name]), agent=name,
                policy=host.policy(name, config.agents[name], args.allow),
            )
            for name, wasm in components.items()
        }  # fmt: skip
        outcomes = [host.wait(guest) for guest in started.values()]
    if args.json:
        print(
            json.dumps(
                [
                    {
                        "agent": o.agent,
                        "status": o.status,
                        "exit_code": o.exit_code,
                        "duration": round(o.duration, 3),
                        "output": o.text,
                    }
                    for o in outcomes
                ],
                indent=2,
            )
        )
    else:
        width = max(len("AGENT"), *(len(o.agent) for o in outcomes))
        print(f"{'AGENT':<{width}}  {'OUTCOME':<7}  {'TIME':>8}  DETAIL")
        for o in outcomes:
            detail = _one_line(o.text, 100)
            print(f"{o.agent:<{width}}  {o.status:<7}  {o.duration:>7.2f}s  {detail}")
    worst = max(o.exit_code for o in outcomes)
    return status_codes.INTERRUPTED if stopper.received else worst


def _approver(choice: str) -> Approver:
    if choice == "ask":
        return TerminalApprover()
    return ApproveAll() if choice == "all" else DenyAll()


class _Stopper:
    """What the signal handler acts on: the host, once it exists, and the signals received."""

    def __init__(self) -> None:
        self.host: Host | None = None
        self.received: list[str] = []


@contextmanager
def _signals() -> Iterator[_Stopper]:
    """On SIGINT/SIGTERM stop every guest (what they opened is cancelled upstream, connections
    close, no child is left); a second signal, even while closing, exits at once."""
    stopper = _Stopper()

    def handler(signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
        if stopper.received:
            os.write(2, f"agent-host: {name} again: exiting at once\n".encode())
            os._exit(status_codes.INTERRUPTED)
        stopper.received.append(name)
        os.write(2, f"agent-host: {name}: stopping every agent (send it again to exit at once)\n".encode())
        if stopper.host is not None:
            stopper.host.stop_all(f"{name} received")

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stopper
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _cmd_build(args: argparse.Namespace) -> int:
    built = build_guest(Path(args.guest), module=args.module, force=args.force)
    print(copy_to(built, Path(args.output)) if args.output else built)
    return status_codes.SUCCESS


def _cmd_new(args: argparse.Namespace) -> int:
    folder = Path(args.dir) / args.name
    if folder.exists():
        raise UsageError(f"{folder} already exists")
    folder.mkdir(parents=True)
    (folder / "app.py").write_text(GUEST_TEMPLATE.format(name=args.name), encoding="utf-8")
    print(folder)
    print(f"agent-host: run it with: agent-host run {folder}", file=sys.stderr)
    return status_codes.SUCCESS


def _cmd_tools(args: argparse.Namespace) -> int:
    config = _config(args)
    names = [args.tooling] if args.tooling else sorted(config.toolings)
    report: dict[str, object] = {}
    worst = status_codes.SUCCESS
    with Host(config, keep_logs=args.debug) as host:
        session = host.session("cli")
        for name in names:
            try:
                rep = session.get(name)
                tools = session.list_tools(rep)
                try:
                    resources = session.list_resources(rep)
                except ToolingError as exc:
                    if exc.code is not ErrorCode.UNAVAILABLE:
                        raise
                    resources = []
            except ToolingError as exc:
                if args.tooling:
                    raise
                print(f"agent-host: {name}: {exc}", file=sys.stderr)
                worst = status_codes.USAGE_ERROR
                continue
            report[name] = {
                "tools": [
                    {"name": t.name, "description": t.description, "inputSchema": t.input_schema, "builtin": t.builtin}
                    for t in tools
                ],
                "resources": [{"uri": r.uri, "name": r.name, "mimeType": r.mime_type} for r in resources],
            }
            if not args.json:
                print(f"{name} ({len(tools)} tools, {len(resources)} resources)")
                for t in tools:
                    print(f"  {t.name:<28} {'[builtin] ' if t.builtin else ''}{_one_line(t.description)}")
                for r in resources:
                    print(f"  {r.uri:<28} {r.mime_type or ''}")
    if args.json:
        print(json.dumps(report, indent=2, ensure_ascii=False))
    return worst


def _one_line(text: str | None, width: int = 90) -> str:
    line = (text or "").strip().splitlines()[0] if (text or "").strip() else ""
    return line if len(line) <= width else line[: width - 3] + "..."


def _cmd_call(args: argparse.Namespace) -> int:
    config = _config(args)
    with Host(config, keep_logs=args.debug) as host:
        session = host.session("cli")
        rep = session.get(args.tooling)
        try:
            outcome = session.call_tool_blocking(rep, args.tool, args.arguments)
        except ToolingError as exc:
            if exc.code is not ErrorCode.TOOL_FAILED or exc.data is None:
                raise
            print(json.dumps(json.loads(exc.data), indent=2, ensure_ascii=False))
            print(f"agent-host: tool {args.tool!r} reported an error: {exc.message}", file=sys.stderr)
            return status_codes.GUEST_ERROR
    print(json.dumps(json.loads(outcome.value), indent=2, ensure_ascii=False))
    return status_codes.SUCCESS


def _cmd_config_init(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if path.exists() and not args.force:
        raise UsageError(f"{path} already exists", hint="pass --force to overwrite it")
    path.write_text(starter_config_text(), encoding="utf-8")
    print(f"agent-host: wrote {path}; check it with: agent-host config check {path}", file=sys.stderr)
    return status_codes.SUCCESS


def _cmd_config_check(args: argparse.Namespace) -> int:
    path = Path(args.path) if args.path else find_config_file(args.config)
    config = load_config(path)
    toolings = ", ".join(sorted(config.toolings)) or "none"
    agents = ", ".join(sorted(config.agents)) or "none"
    print(f"{config.describe_source()}: OK: toolings: {toolings}; agents: {agents}")
    return status_codes.SUCCESS


def _cmd_wit(args: argparse.Namespace) -> int:
    folder = wit_dir()
    if args.path:
        print(folder)
        return status_codes.SUCCESS
    for path in sorted(folder.glob("*.wit")):
        print(f"// ---- {path.name} ----")
        print(path.read_text(encoding="utf-8"))
    return status_codes.SUCCESS
