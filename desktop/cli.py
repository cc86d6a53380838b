"""The `desk` command line: the app, the service, its management, the PTY host, self-test."""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence

from desktop import __version__
from desktop.app.bundle_files import pin_bundle_files
from desktop.config import Settings, load_settings


def _add_dirs(parser: argparse.ArgumentParser, *, top: bool = False) -> None:
    # Sub-commands SUPPRESS their default so `desk --data-dir D serve` keeps D.
    default = None if top else argparse.SUPPRESS
    parser.add_argument("--data-dir", default=default, help="database, token, saved terminals")
    parser.add_argument("--runtime-dir", default=default, help="sockets and registration files")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="desk", description="Desk: a desktop workbench for AI-assisted coding."
    )
    _add_dirs(parser, top=True)
    parser.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    parser.add_argument("--version", action="version", version=f"desk {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    serve = commands.add_parser("serve", help="run the service in the foreground")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=0, help="0 picks a free port")
    _add_dirs(serve)

    service = commands.add_parser("service", help="manage the background service")
    service.add_argument("action", choices=["start", "stop", "restart", "status"])
    service.add_argument(
        "--all", action="store_true", help="with stop: also stop the PTY host (saves terminals)"
    )
    service.add_argument(
        "--json", action="store_true", help="print the result as JSON (for scripts)"
    )
    _add_dirs(service)

    host = commands.add_parser("pty-host", help="the PTY host daemon (started by the service)")
    _add_dirs(host)

    selftest = commands.add_parser("self-test", help="check that this installation works")
    _add_dirs(selftest)

    entry = commands.add_parser(
        "install-desktop-entry",
        help="add Desk to this user's application menu (for a wheel or source install)",
    )
    entry.add_argument("--remove", action="store_true", help="remove the entry and icon")
    return parser


def _settings(args: argparse.Namespace) -> Settings:
    return load_settings(data_dir=args.data_dir, runtime_dir=args.runtime_dir)


def _configure_logging(verbose: bool) -> None:
    logging.basicConfig(
        level=logging.DEBUG if verbose else logging.INFO,
        stream=sys.stderr,
        format="%(asctime)s %(name)s %(levelname)s %(message)s",
    )


def _has_display() -> bool:
    return bool(os.environ.get("DISPLAY") or os.environ.get("WAYLAND_DISPLAY"))


def _print_json(value: object) -> None:
    print(json.dumps(value, indent=2, sort_keys=True))


def _run_app(settings: Settings) -> int:
    if _has_display():
        from desktop.app.window import run

        return run(settings)
    from desktop.app.service import ensure_service

    info = ensure_service(settings)
    print(f"Desk is serving at {info['url']}/")
    print(f"Sign in once with {info['url']}/?token=<the token in {settings.token_path}>")
    return 0


def _service(args: argparse.Namespace, settings: Settings) -> int:
    from desktop.app import service
    from desktop.app.report import DESCRIBERS, failed

    if args.all and args.action != "stop":
        print("desk service: --all goes with stop", file=sys.stderr)
        return 2
    actions = {
        "start": lambda: service.start_service(settings),
        "stop": lambda: service.stop_service(settings, with_pty_host=args.all),
        "restart": lambda: service.restart_service(settings),
        "status": lambda: service.service_status(settings),
    }
    result = _public(actions[args.action]())
    if args.json:
        _print_json(result)
    else:
        print("\n".join(DESCRIBERS[args.action](result, settings)))
    return 1 if failed(args.action, result) else 0


def _public(info: dict[str, object]) -> dict[str, object]:
    """What may be printed: never the token."""
    return {key: value for key, value in info.items() if key != "token"}


def _install_desktop_entry(remove: bool) -> int:
    from desktop.app.desktop_entry import UserEntry, this_installation

    entry = UserEntry.from_environment()
    if remove:
        removed = entry.remove()
        print("\n".join(f"removed {path}" for path in removed) or "no desktop entry to remove")
        return 0
    try:
        entry.install(this_installation())
    except OSError as exc:
        print(f"desk: cannot write the desktop entry: {exc}", file=sys.stderr)
        return 1
    print(f"installed {entry.entry_path}\ninstalled {entry.icon_path}")
    return 0


def main(argv: Sequence[str] | None = None) -> int:
    # First of all: the PTY host and the service outlive upgrades of the files they run from.
    pin_bundle_files()
    args = build_parser().parse_args(argv)
    _configure_logging(args.verbose)
    try:
        settings = _settings(args)
    except ValueError as exc:
        print(f"desk: {exc}", file=sys.stderr)
        return 2
    if args.command == "serve":
        from desktop.server.serve import run_serve

        if not 0 <= args.port <= 65535:
            print("desk serve: --port must be 0..65535", file=sys.stderr)
            return 2
        return run_serve(settings, args.host, args.port)
    if args.command == "service":
        from desktop.app.service import ServiceError

        try:
            return _service(args, settings)
        except ServiceError as exc:
            print(f"desk: {exc}", file=sys.stderr)
            return 1
    if args.command == "pty-host":
        from desktop.ptyhost.daemon import run

        return run(settings)
    if args.command == "self-test":
        from desktop.selftest import run_self_test

        return run_self_test()
    if args.command == "install-desktop-entry":
        return _install_desktop_entry(args.remove)
    from desktop.app.service import ServiceError

    try:
        return _run_app(settings)
    except ServiceError as exc:
        print(f"desk: {exc}", file=sys.stderr)
        return 1
