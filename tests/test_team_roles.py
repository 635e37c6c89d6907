"""Roles when people log in (issue 35 §2), checked in the core: every guarded write refuses a
role without the capability and leaves the database file byte-equal; the right role writes
and the audit log says who did it; without a login nothing is checked."""

import json

import pytest

from checkeval_core import team
from checkeval_core.analysis.reword import propose_rewording
from checkeval_core.annotation import jobs as J
from checkeval_core.annotation.files import export_annotations, import_annotations
from checkeval_core.checklists import editing as M
from checkeval_core.checklists.evidence import question_evidence
from checkeval_core.checklists.grounded import generate as generate_grounded
from checkeval_core.checklists.instance import generate_group_checklists, import_group_checklists
from checkeval_core.checklists.io import import_checklist
from checkeval_core.checklists.review import decide
from checkeval_core.checklists.versions import freeze
from checkeval_core.datasets import import_file
from checkeval_core.judges.saved import add_judge
from checkeval_core.runs.batch import finish_if_done, store_batch_results, write_batch_files
from checkeval_core.runs.jobs import cancel_run, create_run, start_background
from checkeval_core.runs.start import start_runs
from checkeval_core.store import db_path
from checkeval_core.team import Actor, Denied, acting_as
from tests.helpers import batch_lines, fake_batch_results, make_runs_task, run_cli


@pytest.fixture(autouse=True)
def _no_config_admins(monkeypatch, tmp_path):
    monkeypatch.delenv(team.ADMINS_ENV, raising=False)
    monkeypatch.setenv(team.SECRETS_ENV, str(tmp_path / "no-secrets.toml"))


@pytest.fixture
def study(db, tmp_path):
    task = make_runs_task(db, tmp_path)
    for person, role in (("ada", "admin"), ("rita", "researcher"), ("rev", "reviewer"),
                         ("cora", "coordinator"), ("ann", "annotator"), ("bob", "annotator"),
                         ("vic", "viewer")):
        team.grant(db, person, role)
    jid = J.create_job(db, task, ["ann", "bob"], 2, n_items=2, coordinator="cora")
    item = J.queue(db, jid, "ann")[0]["item_pk"]
    qid = J.job_questions(db, jid, item)[0]["id"]
    J.save_answer(db, jid, "ann", item, qid, "yes")
    J.save_answer(db, jid, "bob", item, qid, "no")
    rid = create_run(db, task, "fake", "checkeval")
    files = tmp_path / "in"
    files.mkdir()
    (files / "d.jsonl").write_text(json.dumps({"id": "x", "source": "s", "output": "o"}) + "\n")
    (files / "c.json").write_text(json.dumps({"q": {"definition": "d", "sub_dimensions": {
        "S": {"seed": ["Is it new?"]}}}}))
    (files / "a.csv").write_text("annotator,item_id,question,answer\nzed,d0-s0,"
                                 f"{M.questions(db, task)[0]['text']},yes\n")
    return {"task": task, "job": jid, "item": item, "q": qid, "run": rid, "files": files}


def _file_bytes(db) -> bytes:
    db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    path = db.execute("PRAGMA database_list").fetchone()[2]
    with open(path, "rb") as f:
        return f.read()


# (name, the role that may not, the write)
WRITES = [
    ("import a dataset", "annotator",
     lambda db, s: import_file(db, s["files"] / "d.jsonl", "new", kind="summarization")),
    ("import a checklist", "reviewer",
     lambda db, s: import_checklist(db, s["task"], s["files"] / "c.json")),
    ("add a question", "viewer", lambda db, s: M.add_question(
        db, 1, None, None, "Is it late?", "human")),
    ("edit a question", "coordinator", lambda db, s: M.set_question_text(db, s["q"], "Edited?")),
    ("delete a question", "annotator", lambda db, s: M.delete_question(db, s["q"])),
    ("review decision", "annotator", lambda db, s: decide(db, [s["q"]], "ann", "reject", "x")),
    ("freeze a version", "reviewer", lambda db, s: freeze(db, s["task"])),
    ("save a judge", "viewer", lambda db, s: add_judge(db, "fake", "x")),
    ("start a run", "annotator", lambda db, s: create_run(db, s["task"], "fake", "rocketeval")),
    ("start runs", "coordinator", lambda db, s: start_runs(db, s["task"], ["fake"],
                                                           ["rocketeval"])),
    ("cancel a run", "reviewer", lambda db, s: cancel_run(db, s["run"])),
    ("store batch results", "annotator", lambda db, s: store_batch_results(
        db_path(db), s["run"], [("out.jsonl", b"")])),
    ("create a job", "annotator", lambda db, s: J.create_job(
        db, s["task"], ["ann"], 1, n_items=1, name="mine", coordinator="ann")),
    ("settle", "annotator", lambda db, s: J.adjudicate(db, s["job"], s["item"], s["q"], "yes",
                                                       "ann")),
    ("answer", "viewer", lambda db, s: J.save_answer(db, s["job"], "vic", s["item"], s["q"],
                                                     "no")),
    ("import people's answers", "coordinator",
     lambda db, s: import_annotations(db, s["task"], s["files"] / "a.csv")),
    ("export people's answers", "annotator", lambda db, s: export_annotations(db, s["task"])),
    ("test questions on dev items", "viewer",
     lambda db, s: question_evidence(db, s["task"], "fake")),
    ("grounded generation", "reviewer",
     lambda db, s: generate_grounded(db, s["task"], "q", "contrastive", "fake")),
    ("propose a rewording", "annotator",
     lambda db, s: propose_rewording(db, s["run"], s["q"], "fake")),
    ("grant a role", "researcher", lambda db, s: team.grant(db, "eve", "admin")),
    # a reviewer's per-query generation asked the judge (and filled the request cache) before
    # the inner question write refused; a viewer wrote batch files and switched a run to them
    ("per-query checklists", "reviewer", lambda db, s: generate_group_checklists(
        db, s["task"], "fake")),
    ("import per-query checklists", "reviewer", lambda db, s: import_group_checklists(
        db, s["task"], data='{"group_id": "*", "questions": ["Is it new?"]}\n',
        filename="q.jsonl")),
    ("write batch files", "viewer", lambda db, s: write_batch_files(
        db, s["run"], s["files"] / "batch")),
    ("finish a batched run", "annotator", lambda db, s: finish_if_done(db_path(db), s["run"])),
    ("start a run's worker", "reviewer", lambda db, s: start_background(db_path(db), s["run"])),
]


@pytest.mark.parametrize("name,role,write", WRITES, ids=[w[0] for w in WRITES])
def test_wrong_role_is_refused_and_nothing_is_written(db, study, name, role, write):
    person = {"annotator": "ann", "reviewer": "rev", "viewer": "vic", "coordinator": "cora",
              "researcher": "rita"}[role]
    before = _file_bytes(db)
    with acting_as(Actor(person)), pytest.raises(Denied) as e:
        write(db, study)
    assert f"{person} is {role}" in str(e.value) and "Nothing was written" in str(e.value)
    assert _file_bytes(db) == before


def test_unknown_and_anonymous_people_get_nothing(db, study):
    before = _file_bytes(db)
    with acting_as(Actor("stranger")), pytest.raises(Denied, match="no role"):
        J.save_answer(db, study["job"], "stranger", study["item"], study["q"], "yes")
    with acting_as(Actor(None, "header", "No X-User header on this request.")), \
            pytest.raises(Denied, match="No X-User header"):
        M.set_question_text(db, study["q"], "Edited?")
    assert _file_bytes(db) == before


def test_nobody_records_work_under_another_name(db, study):
    before = _file_bytes(db)
    with acting_as(Actor("ann")), pytest.raises(Denied, match="as 'bob'"):
        J.save_answer(db, study["job"], "bob", study["item"], study["q"], "yes")
    with acting_as(Actor("cora")), pytest.raises(Denied, match="as 'ada'"):
        J.adjudicate(db, study["job"], study["item"], study["q"], "yes", "ada")
    assert _file_bytes(db) == before


def test_the_right_role_writes_and_the_audit_log_says_who(db, study):
    with acting_as(Actor("ann")):
        J.save_answer(db, study["job"], "ann", study["item"], study["q"], "no")
    with acting_as(Actor("cora")):
        J.adjudicate(db, study["job"], study["item"], study["q"], "yes", "cora", "checked")
        # create_job calls the guarded create_job_once: checked and logged once
        J.create_job(db, study["task"], ["ann"], 1, n_items=1, name="second",
                     coordinator="cora")
    assert [(a["role"], a["action"]) for a in team.activity(db, "cora")] == [
        ("coordinator", "create_job_once"), ("coordinator", "adjudicate")]
    mine = team.activity(db, "ann")
    assert [a["action"] for a in mine] == ["save_answer"]
    assert f"job_id={study['job']}" in mine[0]["target"] and "value='no'" in mine[0]["target"]


def test_a_batch_round_trip_is_logged_with_who_did_it(db, study, tmp_path):
    """Batch files are written, their results stored and the run completed by a researcher:
    three writes, each in the audit log under her name and the run (the last two open their
    own database from a path, so they log as the guarded writes do)."""
    rid = study["run"]
    with acting_as(Actor("rita")):
        out = write_batch_files(db, rid, tmp_path / "batch")
        lines = [x for f in out["files"] for x in batch_lines(f)]
        results = "\n".join(fake_batch_results(db, rid, lines)).encode()
        res = store_batch_results(db_path(db), rid, [("out.jsonl", results)], finish=False)
        assert res["pending"] == 0 and res["stored"] == len(lines) > 0
        assert finish_if_done(db_path(db), rid)["status"] == "completed"
    log = team.activity(db, "rita")  # newest first
    assert [(a["role"], a["action"]) for a in log] == [
        ("researcher", "finish_if_done"), ("researcher", "store_batch_results"),
        ("researcher", "write_batch_files")]
    assert all(a["target"].startswith(f"run_id={rid}") for a in log)


class _Secrets(dict):
    """Like Streamlit's secrets: a mapping of keys, whose repr fails with no secrets file."""

    def __repr__(self):
        raise FileNotFoundError("No secrets found")


def test_the_audit_log_names_a_judge_but_never_its_secrets(db, study):
    """Saving a judge from the Judges page passes the app's secrets (to check a key source):
    the log names the judge and leaves the secrets out; without a login nothing reads the
    arguments at all (CI, with no secrets file, crashed the page on the secrets' repr)."""
    secrets = _Secrets(api_key="sk-not-for-the-log")
    add_judge(db, "fake", "local", secrets=secrets)  # the local operator: nothing logged
    with acting_as(Actor("rita")):
        add_judge(db, "fake", "mine", secrets=secrets, params={"n": 2, "x": [1, {"a": 1}]})
    target = team.activity(db, "rita")[0]["target"]
    assert "spec='fake'" in target and "label='mine'" in target
    assert "secrets" not in target and "sk-not" not in target
    assert "params=<dict>" in target  # not a plain dict: named by its type only


def test_without_a_login_nothing_is_checked_nor_logged(db, study):
    unanswered = next(q["id"] for q in M.questions(db, study["task"]) if q["id"] != study["q"])
    M.set_question_text(db, unanswered, "Still editable?")  # the local operator
    team.grant(db, "new", "viewer")
    assert db.execute("SELECT COUNT(*) FROM audit_log").fetchone()[0] == 0


def test_roles_keep_their_history_and_first_admins_come_from_configuration(
        db, study, monkeypatch, tmp_path):
    with acting_as(Actor("ada")):
        team.grant(db, "bob", "coordinator")
        team.remove(db, "vic")
    assert team.role_of(db, "bob") == "coordinator" and team.role_of(db, "vic") is None
    assert [(h["role"], h["granted_by"]) for h in team.history(db, "bob")] == [
        ("annotator", "(local operator)"), ("coordinator", "ada")]
    assert [h["role"] for h in team.history(db, "vic")] == ["viewer", ""]
    with pytest.raises(ValueError, match="Unknown role 'boss'"):
        team.grant(db, "bob", "boss")
    # first admins: the environment, else the secrets file
    assert team.role_of(db, "root") is None
    secrets = tmp_path / "secrets.toml"
    secrets.write_text('checkeval_admins = ["root", "sam"]\n')
    monkeypatch.setenv(team.SECRETS_ENV, str(secrets))
    assert team.role_of(db, "root") == "admin" and team.config_admins() == ["root", "sam"]
    monkeypatch.setenv(team.ADMINS_ENV, " lee , kim ")
    assert team.config_admins() == ["lee", "kim"] and team.role_of(db, "root") is None
    with acting_as(Actor("kim")):
        team.grant(db, "zoe", "viewer")
    with pytest.raises(ValueError, match="by configuration"):
        team.remove(db, "lee")
    assert team.members(db)[0] == {"person": "lee", "role": "admin", "granted_by": "",
                                   "since": "", "source": "configuration"}


def test_pages_follow_the_capability_map():
    assert team.may_open("annotator", "annotate") and team.may_open("annotator", "home")
    for page in ("traces", "run", "analysis", "data", "annotation_jobs", "team", "align"):
        assert not team.may_open("annotator", page), page
    assert team.may_open("viewer", "traces") and not team.may_open("viewer", "run")
    assert team.may_open("reviewer", "checklist") and not team.may_open("reviewer", "dimensions")
    assert team.may_open("coordinator", "annotation_jobs")
    assert not team.may_open(None, "data") and team.may_open(None, "home")
    assert all(team.may_open("admin", p) for p in team.PAGES)


def test_cli_team_add_list_remove(db_path, monkeypatch):
    monkeypatch.delenv(team.ADMINS_ENV, raising=False)
    r = run_cli(["team", "add", "ann", "--role", "annotator"], db=db_path)
    assert r.returncode == 0 and "ann is now annotator" in r.stdout
    r = run_cli(["team", "list", "--json"], db=db_path)
    people = json.loads(r.stdout)
    assert [(p["person"], p["role"], p["granted_by"]) for p in people] == [
        ("ann", "annotator", "(local operator)")]
    r = run_cli(["team", "add", "ann", "--role", "boss"], db=db_path)
    assert r.returncode == 2 and "Unknown role 'boss'" in r.stderr
    r = run_cli(["team", "remove", "ann"], db=db_path)
    assert r.returncode == 0
    assert json.loads(run_cli(["team", "list", "--json"], db=db_path).stdout) == []
    r = run_cli(["team", "remove", "ann"], db=db_path)
    assert r.returncode == 2 and "no role" in r.stderr


def test_the_author_is_exactly_the_acting_person(db, study):
    """Security audit D4: a blank or space-padded name is another person in the store, so it
    is refused like someone else's name; the exact name writes."""
    before = _file_bytes(db)
    for name in ("ann ", " ann", ""):
        with acting_as(Actor("ann")), pytest.raises(Denied, match="Refused: ann"):
            J.save_answer(db, study["job"], name, study["item"], study["q"], "no")
    with acting_as(Actor("cora")), pytest.raises(Denied, match="blank"):
        J.create_job(db, study["task"], ["ann"], 1, n_items=1, name="x")  # no coordinator
    assert _file_bytes(db) == before
    with acting_as(Actor("ann")):
        J.save_answer(db, study["job"], "ann", study["item"], study["q"], "no")
    assert J.answers_of(db, study["job"], "ann", study["item"]) == {study["q"]: "no"}


def test_writers_that_name_their_author_check_it(db, study):
    """Security audit D10: handing items on, proposing a rewording and sending questions to
    review record a name: it must be the acting person's (blank refused), while the local
    operator (no login, the CLI) still writes with none."""
    from checkeval_core.annotation.pools import hand_on
    from checkeval_core.checklists.review import send_to_review, to_review

    proposal = {"task": study["task"], "dropped": [], "new": []}
    writes = [
        ("cora", "coordinator", lambda name: hand_on(db, study["job"], "ann", ["zed"],
                                                     coordinator=name)),
        ("rita", "actor", lambda name: propose_rewording(db, study["run"], study["q"], "fake",
                                                         actor=name)),
        ("rita", "actor", lambda name: send_to_review(db, [study["q"]], "why", actor=name)),
        ("rita", "actor", lambda name: to_review(db, proposal, actor=name)),
    ]
    before = _file_bytes(db)
    for person, _, write in writes:
        for name in ("ada", f"{person} ", ""):
            with acting_as(Actor(person)), pytest.raises(Denied, match=f"Refused: {person}"):
                write(name)
    assert _file_bytes(db) == before
    with acting_as(Actor("rita")):
        assert to_review(db, proposal, actor="rita") == {"queued": 0, "added": [],
                                                         "skipped": []}
    assert hand_on(db, study["job"], "ann", ["zed"])["moved"] >= 1  # the local operator
