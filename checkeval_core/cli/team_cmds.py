"""CLI for roles when people log in: ``team add NAME --role ROLE | remove NAME | list [--json]``,
and ``bench pool-queue`` (many annotators pulling from one pool).

The command line has no login: it acts as the local operator (whoever can open the database
file), so it may grant the first roles before the app is put behind a login."""

from __future__ import annotations

import json

import typer

from checkeval_core.cli.app import app, fail
from checkeval_core.store import open_db

team_app = typer.Typer(no_args_is_help=True,
                       help="Who has which role when the app runs behind a login.")
app.add_typer(team_app, name="team")


@team_app.command("add")
def add_cmd(name: str = typer.Argument(..., help="The person's login name: under a "
                                                 "Streamlit login their verified email, "
                                                 "else their OIDC sub (never the display "
                                                 "name); behind a proxy the header's value."),
            role: str = typer.Option(..., "--role", help="admin, researcher, reviewer, "
                                                         "coordinator, annotator or viewer")
            ) -> None:
    """Give NAME a role (a person has one role; a new one replaces the old, both kept in the
    history).

    `--role ROLE`: admin, researcher, reviewer, coordinator, annotator or viewer;
    an unknown role exits 2 naming the six.
    """
    from checkeval_core.team import grant

    try:
        grant(open_db(), name, role)
    except ValueError as e:
        fail(str(e))
    typer.echo(f"{name.strip()} is now {role}")


@team_app.command("remove")
def remove_cmd(name: str = typer.Argument(...)) -> None:
    """Take NAME's role away (they then get nothing; the history stays).

    Exit 2 if they have no role.
    """
    from checkeval_core.team import remove

    try:
        remove(open_db(), name)
    except ValueError as e:
        fail(str(e))
    typer.echo(f"{name.strip()} has no role now")


@team_app.command("list")
def list_cmd(as_json: bool = typer.Option(False, "--json")) -> None:
    """Everyone with a role: person, role, who granted it and since when (admins named in
    CHECKEVAL_ADMINS or the secrets file show as 'configuration').

    `--json` prints a list of `{"person", "role", "granted_by", "since",
    "source"}`; `source` is `configuration` for the first admins named in
    `CHECKEVAL_ADMINS` (or `checkeval_admins` in the secrets file — they cannot be
    removed here) and `team` otherwise.
    """
    from checkeval_core.team import members

    people = members(open_db())
    if as_json:
        typer.echo(json.dumps(people, indent=2))
        return
    if not people:
        typer.echo("nobody has a role (without a login the app is a single-user tool)")
    for p in people:
        how = "configuration" if p["source"] == "configuration" else \
            f"granted by {p['granted_by']} at {p['since']}"
        typer.echo(f"{p['person']}\t{p['role']}\t{how}")
