"""``checkeval bench speed --engine-only`` checks its options before loading any model."""

from tests.helpers import run_cli


def test_engine_only_is_for_the_embedded_judge(db_path):
    r = run_cli(["bench", "speed", "--judge", "fake", "--engine-only", "--json"], db=db_path)
    assert r.returncode == 2 and "embedded" in r.stderr and not r.stdout.strip()


def test_questions_must_be_positive(db_path):
    r = run_cli(["bench", "speed", "--judge", "embedded", "--engine-only", "--questions", "0"],
                db=db_path)
    assert r.returncode == 2 and "--questions" in r.stderr
