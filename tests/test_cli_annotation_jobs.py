"""``checkeval annotations job-create`` / ``jobs``: a coordinator creates a fixed job or a
pool from the CLI (the same request twice is one job), bad options are refused before
anything is written, and the list shows each job's progress."""

import json

from checkeval_core.annotation import pools as P
from tests.helpers import cli


def jobs(db_path):
    return json.loads(cli(db_path, "annotations", "jobs", "--json").stdout)


def test_create_a_pool_and_a_fixed_job_from_the_cli(db, db_path, task):
    args = ["annotations", "job-create", "--task", task, "--pool", "--k", "2", "--items", "3",
            "--coordinator", "cora", "--claim-minutes", "5", "--json"]
    first = json.loads(cli(db_path, *args).stdout)
    assert first["created"] is True and first["pool"] is True
    assert json.loads(cli(db_path, *args).stdout) == {**first, "created": False}  # twice: one
    meta = P.job_meta(db, first["job_id"])
    assert meta["mode"] == "pool" and meta["k"] == 2 and meta["claim_minutes"] == 5
    fixed = json.loads(cli(db_path, "annotations", "job-create", "--task", task, "--annotators",
                           "ann,bob", "--k", "2", "--items", "2", "--coordinator", "cora",
                           "--json").stdout)
    assert fixed["created"] and not fixed["pool"]
    rows = {r["job_id"]: r for r in jobs(db_path)}
    assert rows[first["job_id"]]["mode"] == "pool" and rows[first["job_id"]]["items"] == 3
    assert rows[first["job_id"]]["needed"] == 6 and rows[first["job_id"]]["submitted"] == 0
    assert rows[fixed["job_id"]]["mode"] == "fixed" and rows[fixed["job_id"]]["needed"] == 4
    text = cli(db_path, "annotations", "jobs", "--task", task).stdout
    assert "0 of 3 items complete · 0 of 6 answers submitted" in text


def test_bad_options_are_refused_and_change_nothing(db, db_path, task):
    for extra, says in ((["--annotators", ""], "a fixed job needs at least one name"),
                        (["--pool", "--strategy", "best"], "--strategy 'best'"),
                        (["--pool", "--strategy", "stratified"], "needs --dimension"),
                        (["--pool", "--claim-minutes", "0"], "--claim-minutes 0"),
                        (["--pool", "--k", "0"], "at least 1 answer")):
        r = cli(db_path, "annotations", "job-create", "--task", task, "--coordinator", "cora",
                *extra)
        assert r.exit_code != 0 and says in r.stdout + r.stderr, (extra, r.stdout + r.stderr)
    assert jobs(db_path) == []
    assert "no annotation job" in cli(db_path, "annotations", "jobs").stdout
