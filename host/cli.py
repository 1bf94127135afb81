"""The `agent-host` command line.

stdout carries only results (a guest's answer, a tool's result, a built component's path, the
WIT), so they can be piped; logs, progress, guest output and errors go to stderr. Errors are
printed as one line (`agent-host: error: ...` plus a hint) with the traceback only under
`--debug`. Exit codes come from `status_codes`: 0 ok, 1 the guest (or a called tool) returned an
error, 2 usage/config/build error or an unreachable tooling, 3 trap or limit, 130 SIGINT, 143 SIGTERM.
A signal stops every step (build, compile, connect, run): no guest starts and no tool is called
after it, and no child process is left.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import shlex
import signal
import sys
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Final

from host import status_codes
from host.app import Host
from host.approval import ApproveAll, Approver, DenyAll, TerminalApprover
from host.builder import build_guest, component_problem, copy_to, find_guests, resolve_component
from host.config import (
    DEFAULT_FILE_NAME,
    AgentConfig,
    Config,
    find_config_file,
    load_config,
    name_problem,
    schema_text,
    starter_config_text,
)
from host.errors import ConfigError, ErrorCode, HostError, ToolingError, UsageError
from host.paths import wit_dir
from host.runtime.guest import Outcome
from host.stopping import Interrupted, StopToken

logger = logging.getLogger("host")

DESCRIPTION: Final = """\
Run AI agents compiled to WebAssembly components. A guest reaches the world only through named
toolings (MCP servers over stdio or streamable HTTP) configured in agent-host.toml; without a
config file the embedded default offers tooling "demo", an MCP server bundled with the host."""

EPILOG: Final = """\
exit codes: 0 ok, 1 the guest returned an error, 2 usage or configuration error, 3 trap or limit,
130 stopped by SIGINT (Ctrl-C), 143 stopped by SIGTERM.
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
    except Interrupted as exc:
        logger.debug("details", exc_info=True)
        print(f"agent-host: stopped: {exc}", file=sys.stderr)
        return exc.exit_code
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
        "Without GUEST and --agent, every [agents.*] runs at once, sharing connections; with --agent\n"
        "repeated, those agents do. A table of outcomes follows and the exit code is the worst one;\n"
        "an agent that cannot be built or compiled is its own row, and the others still run.\n"
        "A guest may use only the toolings it is granted: [agents.NAME] toolings, or --allow\n"
        "(the embedded default configuration grants its tooling demo; a config file, its [host] allow).\n"
        "SIGINT/SIGTERM stop every step (build, compile, connect, run) and cancel what guests opened\n"
        "(exit 130/143); a second signal exits at once.",
    )
    run.add_argument("guest", nargs="?", metavar="GUEST", help="guest folder or .wasm file")
    run.add_argument("--input", metavar="TEXT|@FILE|-", help="input for run(): text, @file, or - for stdin")
    run.add_argument(
        "--agent",
        action="append",
        default=[],
        metavar="NAME",
        help="use the settings of [agents.NAME]; repeat it to run several agents (a table of outcomes)",
    )
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
    new.add_argument("name", metavar="NAME", help="agent name: letters, digits, '-' and '_' (also the folder's name)")
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
    call.add_argument(
        "arguments", nargs="?", default="{}", metavar="ARGS", help="a JSON object, or - to read it from stdin"
    )
    call.set_defaults(handler=_cmd_call)

    config = command("config", "write or check a configuration file", "Write a starter file, or validate one.")
    config_sub = config.add_subparsers(dest="config_command", required=True, metavar="ACTION")
    init = config_sub.add_parser(
        "init", help="write a commented starter file (an agent for each guest folder in ./guests)", parents=[common]
    )
    init.add_argument("path", nargs="?", default=DEFAULT_FILE_NAME, metavar="PATH")
    init.add_argument("--force", action="store_true", help="overwrite an existing file")
    init.set_defaults(handler=_cmd_config_init)
    check = config_sub.add_parser(
        "check",
        help="validate a configuration file: keys, components, python tool imports (--connect: servers too)",
        parents=[common],
    )
    check.add_argument("path", nargs="?", metavar="PATH", help="file to check (default: the one in use)")
    check.add_argument(
        "--connect", action="store_true", help="also start (or reach) every tooling and complete the MCP handshake"
    )
    check.set_defaults(handler=_cmd_config_check)
    schema = config_sub.add_parser(
        "schema", help="print the JSON Schema of the file (for editors: agent-host config schema > FILE)"
    )
    schema.set_defaults(handler=_cmd_config_schema)

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
    names: list[str] = list(dict.fromkeys(args.agent))
    if args.guest is None and len(names) != 1:
        return _run_many(config, args, names)
    if len(names) > 1:
        raise UsageError(
            f"GUEST {args.guest} with {len(names)} --agent options: with a GUEST, name at most one agent",
            hint="drop GUEST to run the agents with their own components",
        )
    agent = _agent(config, names[0]) if names else None
    if args.guest is not None:
        spec = Path(args.guest)
    elif agent is not None and agent.component is not None:
        spec = agent.component
    else:
        raise UsageError(f"[agents.{names[0]}] has no `component`; give a GUEST (folder or .wasm)")
    input_text = _read_input(args.input, agent)
    name = agent.name if agent is not None else spec.stem if spec.suffix == ".wasm" else spec.resolve().name
    approver = _approver(args.approve)
    with _signals() as stopper:
        wasm = resolve_component(spec, module=args.module, stop=stopper.token)
        with Host(config, keep_logs=args.debug, approver=approver, stop=stopper.token) as host:
            stopper.host = host
            outcome = host.run(wasm, input_text, agent=name, policy=host.policy(name, agent, args.allow))
    if outcome.status == "ok":
        sys.stdout.write(outcome.text)
        if sys.stdout.isatty() and not outcome.text.endswith("\n"):
            sys.stdout.write("\n")
        sys.stdout.flush()
    elif outcome.status == "error":
        print(f"agent-host: agent {name} failed: {outcome.text}", file=sys.stderr)
    else:
        print(f"agent-host: agent {name} was stopped: {outcome.text}", file=sys.stderr)
    logger.debug("agent %s: %s in %.2f s", name, outcome.status, outcome.duration)
    return stopper.exit_code if stopper.exit_code is not None else outcome.exit_code


def _agent(config: Config, name: str) -> AgentConfig:
    agent = config.agents.get(name)
    if agent is None:
        raise UsageError(
            f"--agent {name}: no [agents.{name}] table in {config.describe_source()}",
            hint=f"defined agents: {', '.join(sorted(config.agents)) or '(none)'}",
        )
    return agent


def _run_many(config: Config, args: argparse.Namespace, names: list[str]) -> int:
    """Run the named agents (default: every [agents.*]) concurrently; a table (or JSON) of outcomes
    on stdout; the worst exit code. An agent that cannot start (no component, a failed build or
    compile) is its own row, with the error; the others still run."""
    if not config.agents:
        raise UsageError(
            f"nothing to run: give a GUEST (folder or .wasm) or --agent NAME; {config.describe_source()} "
            "defines no [agents.*] tables"
        )
    agents = [_agent(config, name) for name in names] if names else [config.agents[n] for n in sorted(config.agents)]
    given = _read_input(args.input, None) if args.input is not None else None
    rows: dict[str, Outcome] = {}
    started = {}
    with _signals() as stopper:
        components: dict[str, Path] = {}
        for agent in agents:
            try:
                if agent.component is None:
                    raise UsageError(f"has no `component` ({agent.origin})")
                components[agent.name] = resolve_component(agent.component, stop=stopper.token)
            except HostError as exc:
                rows[agent.name] = _not_started(agent.name, exc)
        with Host(config, keep_logs=args.debug, approver=_approver(args.approve), stop=stopper.token) as host:
            stopper.host = host
            for agent in agents:
                if agent.name not in components:
                    continue
                input_text = given if given is not None else agent.input or ""
                try:
                    policy = host.policy(agent.name, agent, args.allow)
                    started[agent.name] = host.start(
                        components[agent.name], input_text, agent=agent.name, policy=policy
                    )
                except HostError as exc:
                    rows[agent.name] = _not_started(agent.name, exc)
            for name, guest in started.items():
                rows[name] = host.wait(guest)
    outcomes = [rows[agent.name] for agent in agents]
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
        status_width = max(len("OUTCOME"), *(len(o.status) for o in outcomes))
        print(f"{'AGENT':<{width}}  {'OUTCOME':<{status_width}}  {'TIME':>8}  DETAIL")
        for o in outcomes:
            detail = _one_line(o.text, 100)
            print(f"{o.agent:<{width}}  {o.status:<{status_width}}  {o.duration:>7.2f}s  {detail}")
    worst = max(o.exit_code for o in outcomes)
    return stopper.exit_code if stopper.exit_code is not None else worst


def _not_started(agent: str, exc: HostError) -> Outcome:
    """The row of an agent that could not start; the whole error goes to stderr now."""
    if not isinstance(exc, Interrupted):
        print(f"agent-host: error: agent {agent}: {exc}", file=sys.stderr)
    return Outcome(agent, exc.reference, f"agent {agent}: {exc.message}", 0.0, code=exc.exit_code)


def _approver(choice: str) -> Approver:
    if choice == "ask":
        return TerminalApprover()
    return ApproveAll() if choice == "all" else DenyAll()


class _Stopper:
    """What the signal handler acts on: the stop token, the host once it exists."""

    def __init__(self, raise_at_once: bool) -> None:
        self.token = StopToken()
        self.host: Host | None = None
        self.raise_at_once = raise_at_once

    @property
    def exit_code(self) -> int | None:
        """128 + the signal's number once one was received (130 SIGINT, 143 SIGTERM), else None."""
        return status_codes.for_signal(self.token.signum) if self.token.stopped else None


@contextmanager
def _signals(*, raise_at_once: bool = False) -> Iterator[_Stopper]:
    """On SIGINT/SIGTERM stop everything: the stop token ends a build or compile in progress and
    lets no guest start; running guests are stopped (what they opened is cancelled upstream,
    connections close, no child is left). With `raise_at_once` (commands that wait on one call)
    `Interrupted` is raised in the main thread as well. A second signal, even while closing,
    exits at once."""
    stopper = _Stopper(raise_at_once)

    def handler(signum: int, frame: object) -> None:
        name = signal.Signals(signum).name
        if stopper.token.stopped:
            os.write(2, f"agent-host: {name} again: exiting at once\n".encode())
            os._exit(status_codes.for_signal(signum))
        os.write(2, f"agent-host: {name}: stopping everything (send it again to exit at once)\n".encode())
        reason = f"{name} received"
        stopper.token.stop(reason, signum)
        if stopper.host is not None:
            stopper.host.stop_all(reason, signum)
        if stopper.raise_at_once:
            raise Interrupted(reason, signum=signum)

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield stopper
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def _cmd_build(args: argparse.Namespace) -> int:
    with _signals() as stopper:
        built = build_guest(Path(args.guest), module=args.module, force=args.force, stop=stopper.token)
    print(copy_to(built, Path(args.output)) if args.output else built)
    return status_codes.SUCCESS


def _cmd_new(args: argparse.Namespace) -> int:
    problem = name_problem(args.name)
    if problem is not None:
        raise UsageError(problem, hint="for example: agent-host new my-agent")
    folder = Path(args.dir) / args.name
    if folder.exists():
        raise UsageError(f"{shlex.quote(str(folder))} already exists", hint="choose another NAME or --dir")
    folder.mkdir(parents=True)
    (folder / "app.py").write_text(GUEST_TEMPLATE.format(name=args.name), encoding="utf-8")
    print(folder)
    print(f"agent-host: run it with: agent-host run {shlex.quote(str(folder))}", file=sys.stderr)
    return status_codes.SUCCESS


def _cmd_tools(args: argparse.Namespace) -> int:
    config = _config(args)
    names = [args.tooling] if args.tooling else sorted(config.toolings)
    report: dict[str, object] = {}
    worst = status_codes.SUCCESS
    with _signals(raise_at_once=True) as stopper, Host(config, keep_logs=args.debug, stop=stopper.token) as host:
        stopper.host = host
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
                if args.tooling and not args.json:
                    raise
                print(f"agent-host: {name}: {exc}", file=sys.stderr)
                report[name] = {"error": {"code": exc.code.value, "message": exc.message}}
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
    arguments = sys.stdin.read() if args.arguments == "-" else args.arguments
    with _signals(raise_at_once=True) as stopper, Host(config, keep_logs=args.debug, stop=stopper.token) as host:
        stopper.host = host
        session = host.session("cli")
        rep = session.get(args.tooling)
        try:
            outcome = session.call_tool_blocking(rep, args.tool, arguments)
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
        raise UsageError(f"{shlex.quote(str(path))} already exists", hint="pass --force to overwrite it")
    base = path.absolute().parent
    guests = [
        (folder.name, folder.relative_to(base).as_posix())
        for folder in find_guests(base)
        if name_problem(folder.name) is None
    ]
    path.write_text(starter_config_text(guests), encoding="utf-8")
    agents = f"agents: {', '.join(name for name, _ in guests)}" if guests else "no guest folders in ./guests yet"
    print(f"agent-host: wrote {path} ({agents})", file=sys.stderr)
    print(f"agent-host: check it with: agent-host config check {shlex.quote(str(path))}", file=sys.stderr)
    return status_codes.SUCCESS


def _cmd_config_check(args: argparse.Namespace) -> int:
    """Every problem found is printed, not only the first: components, python tool imports and,
    with --connect, every tooling's handshake."""
    path = Path(args.path) if args.path else find_config_file(args.config)
    config = load_config(path)
    problems: list[str] = []
    for name, agent in sorted(config.agents.items()):
        if agent.component is not None:
            problem = component_problem(agent.component)
            if problem is not None:
                problems.append(f"[agents.{name}] component: {problem} ({agent.origin})")
    python = [tooling for tooling in config.toolings.values() if tooling.kind == "python"]
    if python:
        from host.toolings.python import import_tools

        for tooling in python:
            try:
                import_tools(tooling)
            except ToolingError as exc:
                problems.append(exc.message)
    if args.connect and config.toolings:
        with _signals(raise_at_once=True) as stopper, Host(config, stop=stopper.token) as host:
            stopper.host = host
            session = host.session("config-check")
            for name in sorted(config.toolings):
                try:
                    session.get(name)
                    print(f"agent-host: tooling {name}: connected", file=sys.stderr)
                except ToolingError as exc:
                    problems.append(f"[tooling.{name}]: {exc}")
    for problem in problems:
        print(f"agent-host: problem: {problem}", file=sys.stderr)
    if problems:
        raise ConfigError(f"{config.describe_source()}: {len(problems)} problem(s) found (listed above)")
    toolings = ", ".join(sorted(config.toolings)) or "none"
    agents = ", ".join(sorted(config.agents)) or "none"
    connected = " (every tooling connected)" if args.connect else ""
    print(f"{config.describe_source()}: OK: toolings: {toolings}; agents: {agents}{connected}")
    return status_codes.SUCCESS


def _cmd_config_schema(args: argparse.Namespace) -> int:
    sys.stdout.write(schema_text())
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
