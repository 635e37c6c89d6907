"""CLI for judges: ``judge test``, ``judge list``, ``judge add``, ``judge sources`` and
``bench speed``."""

from __future__ import annotations

import json

import typer

from checkeval_core.cli.app import app, fail
from checkeval_core.judges.registry import JudgeSpecError, get_judge, parse_spec
from checkeval_core.stats.values import fmt

judge_app = typer.Typer(no_args_is_help=True, help="Configure and test judges.")
app.add_typer(judge_app, name="judge")


def _load(spec: str):
    """The judge for a test: its key from the saved judge (``--key-env``) or the defaults,
    no response cache (a test must reach the backend)."""
    from checkeval_core.store import open_db

    try:
        parse_spec(spec)
        return get_judge(spec, db=open_db(), cache=False)
    except (JudgeSpecError, ValueError, ImportError) as e:
        fail(str(e))


@judge_app.command("test")
def judge_test_cmd(judge: str = typer.Option("embedded", "--judge", help="Judge spec."),
                   as_json: bool = typer.Option(False, "--json")) -> None:
    """Ask the judge one demo question and show verdict, p(Yes), latency.

    It uses the same key as runs do (the saved judge's `--key-env`, else the
    default variables). `--json`: `{"verdict", "p_yes", "mode", "latency_ms",
    "capabilities"}`.
    """
    from checkeval_core.runs.judge_check import judge_test

    res = judge_test(_load(judge))
    if as_json:
        typer.echo(json.dumps({k: res[k] for k in ("verdict", "p_yes", "mode", "latency_ms",
                                                    "capabilities")} |
                              ({"error": res["error"]} if res["error"] else {})))
    else:
        p = fmt(res["p_yes"])
        typer.echo(f"verdict={res['verdict']} p_yes={p} mode={res['mode']} "
                   f"latency={res['latency_ms']:.0f} ms tokens={res['tokens_in']}"
                   + (f" error={res['error']}" if res["error"] else ""))
    if res["error"]:
        raise typer.Exit(1)


@judge_app.command("list")
def judge_list_cmd(as_json: bool = typer.Option(False, "--json")) -> None:
    """Saved judges (the embedded one is always there)."""
    from checkeval_core.judges.saved import list_judges
    from checkeval_core.store import open_db

    js = list_judges(open_db())
    if as_json:
        typer.echo(json.dumps(js))
    else:
        for j in js:
            typer.echo(f"{j['id']}\t{j['spec']}\t{j['label']}\t{j['key_env']}")


@judge_app.command("add")
def judge_add_cmd(spec: str = typer.Argument(..., help="Judge spec."),
                  label: str = typer.Option("", "--label"),
                  key_env: str = typer.Option("", "--key-env",
                                              help="NAME of the env variable holding the key.")
                  ) -> None:
    """Save a judge configuration (never a key).

    `--key-env` takes the NAME of a variable, never the key. It must name a
    variable the operator declared and approved for the judge's address in
    `CHECKEVAL_KEY_HOSTS` (exit 2 otherwise, naming the variable and the address;
    `docs/security.md`, *Judge keys*).
    """
    from checkeval_core.judges.saved import add_judge
    from checkeval_core.store import open_db

    try:
        jid = add_judge(open_db(), spec, label=label, key_env=key_env)
    except (JudgeSpecError, ValueError) as e:
        fail(str(e))
    typer.echo(f"judge {jid}: {parse_spec(spec).spec}")


@judge_app.command("sources")
def judge_sources_cmd(as_json: bool = typer.Option(False, "--json")) -> None:
    r"""Key sources the operator declared and the addresses each key may be sent to
    (CHECKEVAL_KEY_HOSTS and the backends' defaults): names and addresses only, never keys.

    Lists the declared variables, whether each is set, and their approved
    addresses — never a value (`docs/security.md`, *Judge keys*). `--json`:
    `[{"variable", "approved": \[addresses], "set"}]`.
    """
    import os

    from checkeval_core.judges.keys import KeyRefused, declared_sources

    try:
        table = declared_sources()
    except KeyRefused as e:
        fail(str(e))
    rows = [{"variable": var, "approved": hosts, "set": bool(os.environ.get(var))}
            for var, hosts in table.items()]
    if as_json:
        typer.echo(json.dumps(rows))
    else:
        for r in rows:
            typer.echo(f"{r['variable']}\t{'set' if r['set'] else 'unset'}\t"
                       f"{', '.join(r['approved']) or '(no address approved)'}")
