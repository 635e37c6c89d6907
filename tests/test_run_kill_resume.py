"""Kill a real ``checkeval run`` with SIGKILL mid-run, resume it: no answer lost, no judge
call repeated (the fake judge logs every request that reaches it)."""

import json
import os
import signal
import subprocess
import sys
import time

from checkeval_core.store import open_db


def test_sigkill_and_resume(tmp_path):
    db = tmp_path / "k.db"
    log = tmp_path / "calls.log"
    base = [sys.executable, "-m", "checkeval_core", "--db", str(db)]
    subprocess.run([*base, "demo"], check=True, capture_output=True, timeout=120)
    env = dict(os.environ, CHECKEVAL_FAKE_DELAY="0.01", CHECKEVAL_FAKE_LOG=str(log))
    proc = subprocess.Popen([*base, "run", "--task", "summeval-demo", "--judge", "fake",
                             "--method", "rocketeval", "--limit", "6", "--quiet"],
                            env=env, stderr=subprocess.PIPE, text=True)
    first = proc.stderr.readline().strip()
    assert first.startswith("run ") and first.endswith(" started")
    run_id = int(first.split()[1])
    d = open_db(db)
    deadline = time.time() + 120
    while time.time() < deadline:
        n = d.execute("SELECT COUNT(*) FROM answer WHERE run_id = ?", [run_id]).fetchone()[0]
        if n >= 200:  # well into the run (6 items x 122 questions = 732 answers)
            break
        time.sleep(0.05)
    proc.send_signal(signal.SIGKILL)
    proc.wait(10)
    before = d.execute("SELECT COUNT(*) FROM answer WHERE run_id = ?", [run_id]).fetchone()[0]
    assert 200 <= before < 732
    assert d.execute("SELECT status FROM run WHERE id = ?", [run_id]).fetchone()[0] == "running"
    snapshot = {tuple(r) for r in d.execute(
        "SELECT item_id, question_id, verdict, p_yes FROM answer WHERE run_id = ?", [run_id])}

    r = subprocess.run([*base, "run", "--resume", str(run_id), "--json", "--quiet"], env=env,
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    out = json.loads(r.stdout)
    assert out == {"run": run_id, "status": "completed", "n_answers": 732}
    after = {tuple(x) for x in d.execute(
        "SELECT item_id, question_id, verdict, p_yes FROM answer WHERE run_id = ?", [run_id])}
    assert snapshot <= after  # nothing stored before the kill was lost or changed
    calls = log.read_text().split()
    assert len(calls) == len(set(calls)) == 732  # every request reached the judge exactly once
