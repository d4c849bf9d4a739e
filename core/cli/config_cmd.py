"""``coven config`` shows the global settings; ``coven config set NAME VALUE`` changes one.

``default-timeout`` (default ``1d``) is the timeout of every run whose routine has none of its
own (``--timeout default``, or stored before the setting existed); ``none`` means no limit.
``max-active`` (default ``4``) is how many runs may be active at once. A change applies to
runs claimed from then on.

``--json`` prints ``{"settings": [SETTING, ...]}`` (``config``) or one SETTING (``config
set``), each with ``name``, ``value``, ``default`` (true while never set), ``changed_at``
and ``help`` (stable).
"""

from __future__ import annotations

import argparse
from typing import Any

from coven_core.cli.arguments import add_store_options, opened_engine
from coven_core.cli.output import print_json, print_table
from coven_core.notation.i18n import _
from coven_core.operations import settings


def register(commands: Any) -> None:
    parser = commands.add_parser("config", help=_("show or change the global settings"))
    add_store_options(parser)
    parser.set_defaults(run=run_show)
    actions = parser.add_subparsers(dest="config_action", metavar="ACTION")
    change = actions.add_parser("set", help=_("change a setting, e.g. set default-timeout 6h"))
    names = sorted(settings.KNOWN)
    change.add_argument("name", metavar="NAME", choices=names,
                        help=_("the setting: {names}").format(names=", ".join(names)))  # fmt: skip
    change.add_argument("value", metavar="VALUE", help=_("e.g. default-timeout 6h, 1d or none"))
    add_store_options(change)
    change.set_defaults(run=run_set)


def run_show(args: argparse.Namespace) -> int:
    with opened_engine(args) as engine, engine.store.read() as conn:
        values = settings.current(conn)
    if args.json:
        print_json({"settings": [value.to_json() for value in values]})
        return 0
    default = _("(default)")
    rows = [[v.name, v.value + (f" {default}" if v.is_default else ""), _(v.help)] for v in values]
    print_table([_("Setting"), _("Value"), _("Meaning")], rows)
    return 0


def run_set(args: argparse.Namespace) -> int:
    settings.KNOWN[args.name].check(args.value)  # a bad value makes no store where none is
    with opened_engine(args, create=True) as engine:
        value = engine.operator.set_setting(args.name, args.value)
    if args.json:
        print_json(value.to_json())
    else:
        print(_("{name} is now {value}; runs claimed from now on use it.").format(
            name=value.name, value=value.value))  # fmt: skip
    return 0
